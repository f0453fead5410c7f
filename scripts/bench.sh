#!/usr/bin/env bash
# make bench: every figure beside a baseline taken in the same run (this machine is noisy; ratios travel).
# BENCH_GPS_SECONDS sets the measured window of each GPS log scenario (default 120; real time), BENCH_STREET_SECONDS
# the parked window of the street scenario (default 500: the whole run takes about 10 minutes).
set -euo pipefail
bin=${1:?usage: bench.sh RELEASE_BIN_DIR}
shared="$(cd "$(dirname "$0")/../.." && pwd)/shared/testdata/nmea"

echo "== RPC round trip"
"$bin/driverd-bench" rpc --bin "$bin"
echo
echo "== GPS: CPU, wake-ups and RSS per minute"
gps_args=(--bin "$bin" --seconds "${BENCH_GPS_SECONDS:-120}")
if [[ -f "$shared/signalk-gps.log" && -f "$shared/20100411_Geko_Regensburg.txt" ]]; then
    echo "(real receiver logs: signalk-gps.log stationary, 20100411_Geko_Regensburg.txt moving)"
    gps_args+=(--stationary "$shared/signalk-gps.log" --moving "$shared/20100411_Geko_Regensburg.txt")
else
    echo "(../shared is absent: synthesised logs)"
fi
"$bin/driverd-bench" gps "${gps_args[@]}" --street-seconds "${BENCH_STREET_SECONDS:-500}"
echo
echo "== GPS: fix quality (spikes that reach the backend)"
"$bin/driverd-bench" gps-quality --bin "$bin"
echo
echo "== Arrivals and the odometer (the daemon's rules over synthesised drives)"
"$bin/driverd-bench" arrivals
echo
echo "== The vehicle's OBD-II adapter: cost per minute beside no adapter; speed → safety gate beside GNSS only"
vehicle_logs=()
if [[ -f "$shared/signalk-gps.log" && -f "$shared/20100411_Geko_Regensburg.txt" ]]; then
    vehicle_logs=(--stationary "$shared/signalk-gps.log" --moving "$shared/20100411_Geko_Regensburg.txt")
fi
"$bin/driverd-bench" vehicle --bin "$bin" --threads --seconds "${BENCH_VEHICLE_SECONDS:-60}" --parked-seconds "${BENCH_VEHICLE_PARKED_SECONDS:-240}" --trials "${BENCH_VEHICLE_TRIALS:-8}" "${vehicle_logs[@]}" \
    --python "$(dirname "$0")/../.build/tools/venv/bin/python" --car-script "$(dirname "$0")/../Tests/IntegrationTests/Support/obd_car.py"
echo
echo "== Storage that fails: a parked unit's CPU and wake-ups with a full store and a read-only one, beside a healthy one (root)"
"$bin/driverd-bench" storage --bin "$bin" --seconds "${BENCH_STORAGE_SECONDS:-60}"
echo
echo "== Outbox and uplink"
"$bin/driverd-bench" uplink --bin "$bin" --seconds "${BENCH_UPLINK_SECONDS:-60}"
echo
echo "== The radio: bursts and awake seconds an hour (the LTE tail), and wake-ups, moving, parked and overnight (BENCH_RADIO_SECONDS, default 300; overnight 1260: about 24 minutes)"
# BENCH_RADIO_BASELINE_BIN: a directory with the previous release's driverd and dispatch-sim to compare with; without
# it the baseline is these binaries with release 0.1.0's radio settings (the backend's 30-s ping, 10-s parked batches).
radio_args=(--bin "$bin" --seconds "${BENCH_RADIO_SECONDS:-300}" --overnight-seconds "${BENCH_RADIO_OVERNIGHT_SECONDS:-1260}")
if [[ -n "${BENCH_RADIO_BASELINE_BIN:-}" ]]; then radio_args+=(--baseline-bin "$BENCH_RADIO_BASELINE_BIN"); fi
"$bin/driverd-bench" radio "${radio_args[@]}"
echo
echo "== Lossy links beside a clean one: real units losing 10 % and 30 % of requests and WebSocket messages (BENCH_LOSS_SECONDS, default 300)"
loss_args=(--bin "$bin" --seconds "${BENCH_LOSS_SECONDS:-300}")
if [[ -n "${BENCH_LOSS_BASELINE_BIN:-}" ]]; then loss_args+=(--baseline-bin "$BENCH_LOSS_BASELINE_BIN"); fi
"$bin/driverd-bench" loss "${loss_args[@]}"
echo
echo "== A fleet's storm after an outage: 10,000 units on the daemon's own uplink rules (virtual time), beside Traccar's fixed 30 s and the previous release"
"$bin/driverd-bench" fleet --units "${BENCH_FLEET_UNITS:-10000}" --capacity "${BENCH_FLEET_CAPACITY:-200}"
echo
echo "== The same with real driverd processes (BENCH_FLEET_REAL_UNITS, default 100) against dispatch-sim's admission control"
"$bin/driverd-bench" fleet-real --bin "$bin" --units "${BENCH_FLEET_REAL_UNITS:-100}" --capacity "${BENCH_FLEET_REAL_CAPACITY:-5}"
echo
echo "== Each unit its own key: TLS handshakes with the unit's certificate (key file, key in a TPM: swtpm) beside none, same run"
# swtpm, the software TPM, on a port of its own; its TCTI finds the control channel on the next port. A port the
# handshakes just left in TIME_WAIT can refuse swtpm's bind: it exits, and another port is tried.
tpm_dir=$(mktemp -d)
for attempt in 1 2 3 4 5; do
    tpm_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    (( tpm_port < 65535 )) || continue
    swtpm socket --tpm2 --tpmstate "dir=$tpm_dir" --server "type=tcp,port=$tpm_port,bindaddr=127.0.0.1" \
        --ctrl "type=tcp,port=$((tpm_port + 1)),bindaddr=127.0.0.1" --flags not-need-init,startup-clear 2>>"$tpm_dir/swtpm.log" &
    tpm_pid=$!
    for _ in $(seq 50); do
        [[ $(ss -Hltn "( sport = :$tpm_port or sport = :$((tpm_port + 1)) )" | wc -l) -eq 2 ]] && break
        kill -0 "$tpm_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$tpm_pid" 2>/dev/null && break
    wait "$tpm_pid" 2>/dev/null || true
done
"$bin/driverd-bench" tls-handshake --tpm "swtpm:host=127.0.0.1,port=$tpm_port"
kill -9 "$tpm_pid"; wait "$tpm_pid" 2>/dev/null || true; rm -rf "$tpm_dir"
echo
echo "== Certificate renewals a backend sees from 10,000 units over a simulated year (the daemon's own rule beside two without jitter)"
"$bin/driverd-bench" renewals --units "${BENCH_RENEWAL_UNITS:-10000}"
echo
echo "== Urgent items behind a ping backlog"
"$bin/driverd-bench" urgent --bin "$bin" --trials "${BENCH_URGENT_TRIALS:-50}"
echo
echo "== Flash writes and the journal, parked, moving and offline (BENCH_FLASH_SECONDS, default 240: about 6 minutes)"
"$bin/driverd-bench" flash --bin "$bin" --seconds "${BENCH_FLASH_SECONDS:-240}"
echo
echo "== Driver actions online"
"$bin/driverd-bench" workflow --bin "$bin" --tasks "${BENCH_WORKFLOW_TASKS:-30}"
echo
echo "== The driver's screen: a tap and a push to the screen beside raw socket clients, in each language; the kiosk's RSS"
echo "(BENCH_KIOSK_SOAK_MINUTES=60 adds the page's memory after an hour of the journey loop)"
"$(dirname "$0")/../.build/tools/venv/bin/python" "$(dirname "$0")/kiosk-bench.py" "$bin" \
    --pushes "${BENCH_KIOSK_PUSHES:-50}" --soak-minutes "${BENCH_KIOSK_SOAK_MINUTES:-0}" \
    --languages "${BENCH_KIOSK_LANGUAGES:-de,fr,es,pt,pt-BR,pl,tr,ar}"
