#!/usr/bin/env bash
# Installs the Debian packages the build, tests and demo need, only when some are missing. Idempotent, quiet.
set -euo pipefail
packages=(pkg-config libsystemd-dev libsqlite3-dev libgps-dev gpsd gpsd-clients systemd python3)
missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "installing Debian packages: ${missing[*]}" >&2
run() { if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to install ${missing[*]}: run 'apt-get install -y ${missing[*]}' as root" >&2; exit 1; fi; }
export DEBIAN_FRONTEND=noninteractive
run apt-get update -qq >/dev/null
run apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
