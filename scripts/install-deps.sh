#!/usr/bin/env bash
# Installs the Debian packages the build, tests and demo need, only when some are missing. Idempotent, quiet.
# faketime and openssl: the clock tests run the daemon under another wall clock against a TLS backend.
# chromium, espeak-ng and sox: the kiosk's tests drive the screen in a real browser and measure the voice.
# fuse3 and python3-fusepy: the power-cut tests put the daemon's state on a file system that drops unsynced writes.
# tcpdump: `driverd-bench radio` captures every packet between driverd and its backend.
# libtss2-dev and swtpm: the unit's key in a TPM 2.0 (tpm2-tss), tested against the software TPM.
set -euo pipefail
packages=(pkg-config libsystemd-dev libsqlite3-dev libgps-dev zlib1g-dev gpsd gpsd-clients systemd python3 python3-venv faketime openssl
    chromium espeak-ng sox fuse3 python3-fusepy tcpdump libtss2-dev swtpm)
# `make deb` and its install test also need Debian's packaging tools.
if [[ "${1:-}" == "--packaging" ]]; then packages+=(dpkg-dev binutils lintian); fi
missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
run() { if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to install ${missing[*]}: run 'apt-get install -y ${missing[*]}' as root" >&2; exit 1; fi; }
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "installing Debian packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    run apt-get update -qq >/dev/null
    run apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# From PyPI, in a venv under .build: schemathesis checks dispatch-sim against docs/backend-openapi.yaml;
# Playwright (driving Debian's chromium, no browser download), axe-core's wrapper, pytest (pytest-xdist runs a few
# at once) and websockets run the kiosk's tests; ELM327-emulator (`python -m elm`) is the OBD-II adapter of the
# vehicle tests and the demo.
python_tools=(schemathesis==4.32.5 playwright==1.65.2 axe-playwright-python==0.1.8 pytest==9.2.0 pytest-xdist==3.8.0 websockets==17.4
    ELM327-emulator==4.0.0)
venv="$(cd "$(dirname "$0")/.." && pwd)/.build/tools/venv"
stamp="$venv/.installed"
if [[ "$(cat "$stamp" 2>/dev/null)" != "${python_tools[*]}" ]]; then
    echo "installing ${python_tools[*]} into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "${python_tools[@]}"
    echo "${python_tools[*]}" >"$stamp"
fi
