#!/usr/bin/env bash
# Installs the Debian packages the build, tests and demo need, only when some are missing. Idempotent, quiet.
# faketime and openssl: the clock tests run the daemon under another wall clock against a TLS backend.
set -euo pipefail
packages=(pkg-config libsystemd-dev libsqlite3-dev libgps-dev zlib1g-dev gpsd gpsd-clients systemd python3 python3-venv faketime openssl)
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

# schemathesis (from PyPI, in a venv under .build) checks dispatch-sim against docs/backend-openapi.yaml.
SCHEMATHESIS_VERSION=4.32.5
venv="$(cd "$(dirname "$0")/.." && pwd)/.build/tools/venv"
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    echo "installing schemathesis $SCHEMATHESIS_VERSION into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
