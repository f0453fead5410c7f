#!/usr/bin/env bash
# make demo: gpsd fed by gpsfake with a synthesised drive, and driverd with its state and socket under
# ./.demo, seen through driverctl. Ends by itself after DEMO_SECONDS (default 60) or on Ctrl-C, and leaves
# no process behind.
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR}
root=$(pwd)/.demo
rm -rf "$root"
mkdir -p "$root"
socket="$root/driverd.sock"
export DRIVERD_SOCKET="$socket"
port=${DEMO_GPSD_PORT:-29470}
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    sleep 0.5
    # gpsfake may spin on SIGTERM after its log ends; its gpsd is a separate process.
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    pkill -KILL -f "gpsd .*-S $port" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== synthesising a drive (depot, restaurant, customer) as NMEA"
"$bin/nmea-synth" --preset demo -o "$root/demo.nmea"
echo "== gpsd fed by gpsfake on 127.0.0.1:$port (real time)"
TMPDIR="$root" gpsfake -q -n -P "$port" -c 0.333 "$root/demo.nmea" >"$root/gpsfake.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

echo "== driverd"
"$bin/driverd" --socket "$socket" --state-dir "$root/state" --config "$root/driverd.toml" \
    --gpsd "127.0.0.1:$port" --log-target stderr 2> >(sed 's/^/  driverd| /' >&2) &
daemon=$!
pids=("$daemon" "${pids[@]}")
for _ in $(seq 100); do [[ -S "$socket" ]] && break; sleep 0.1; done
sleep 3

echo; echo "\$ driverctl status"; "$bin/driverctl" status
echo; echo "\$ driverctl gps --follow   (each recorded fix: 1 Hz moving, 0.1 Hz stationary)"
timeout "${DEMO_SECONDS:-60}" "$bin/driverctl" gps --follow || true
echo; echo "\$ driverctl gps"; "$bin/driverctl" gps
echo; echo "stopping (SIGTERM: driverd commits its last pings)"
kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true
