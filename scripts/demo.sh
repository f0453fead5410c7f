#!/usr/bin/env bash
# make demo: driverd in the foreground with its state and socket under ./.demo, and driverctl's view of it.
# Ends by itself after DEMO_SECONDS (default 20) or on Ctrl-C, and leaves no process behind.
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR}
root=$(pwd)/.demo
mkdir -p "$root"
socket="$root/driverd.sock"
export DRIVERD_SOCKET="$socket"

"$bin/driverd" --socket "$socket" --state-dir "$root/state" --config "$root/driverd.toml" --log-target stderr &
daemon=$!
cleanup() { kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM

for _ in $(seq 100); do [[ -S "$socket" ]] && break; sleep 0.1; done
echo
echo "\$ driverctl describe"; "$bin/driverctl" describe
echo
echo "\$ driverctl status"; "$bin/driverctl" status
echo
echo "driverd is serving $socket; try: DRIVERD_SOCKET=$socket $bin/driverctl status --json"
echo "(stops by itself in ${DEMO_SECONDS:-20} s, or press Ctrl-C)"
sleep "${DEMO_SECONDS:-20}"
echo
echo "\$ driverctl status"; "$bin/driverctl" status
echo "stopping driverd (SIGTERM)"
