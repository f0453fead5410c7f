#!/usr/bin/env bash
# make demo: the whole stack on one machine, and a scripted driver doing one delivery while the screen shows
# the driver's view (the next-stop card and the queue). driverd-kiosk serves the driver's screen too (its URL is
# printed) and a headless chromium photographs it at the journey's key moments into .demo/screens/.
# gpsd is fed by gpsfake with a synthesised drive through
# Regensburg (depot, restaurant, customer) at twice real time; dispatch-sim serves the matching order; driverd
# talks to both. Ends by itself after the delivery (DEMO_SECONDS bounds it, default 240) or on Ctrl-C, and
# leaves no process behind.
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
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
# The screenshot helper may end early: a write to it then fails, and the demo goes on.
trap '' PIPE
trap 'exit 130' INT TERM
ctl() { "$bin/driverctl" "$@"; }
say() { printf '\n\033[1m%s\033[0m\n' "$*"; }

say "== dispatch-sim (the reference backend, and the fleet's CA: HTTPS with mutual TLS) with one order for driver rider1"
"$bin/dispatch-sim" --port 0 --scenario "$here/demo-scenario.json" --tls-dir "$root/fleet-ca" --claim-token demo-fleet-claim \
    >"$root/sim.out" 2>"$root/sim.log" &
pids+=($!)
for _ in $(seq 100); do [[ -s "$root/sim.out" ]] && break; sleep 0.1; done
backend=$(head -1 "$root/sim.out" | sed 's/.* listening on //')
echo "   $backend"

say "== gpsd fed by gpsfake on 127.0.0.1:$port (a synthesised drive, twice real time)"
# Dated from now: with the system clock unsynchronised (no NTP here) driverd stamps from GPS time.
"$bin/nmea-synth" --preset demo --start-time now -o "$root/demo.nmea"
TMPDIR="$root" gpsfake -q -n -P "$port" -c 0.166 "$root/demo.nmea" >"$root/gpsfake.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

# The van itself: an OBD-II adapter (ELM327-emulator, as in the tests) with its engine running and a pending fault
# code; the demo's loop below keeps its speed with the drive's (docs/VEHICLE.md).
vehicle=""
car_state="$root/car.json"
venv_python="$here/../.build/tools/venv/bin/python"
if [[ -x "$venv_python" ]] && "$venv_python" -c 'import elm' 2>/dev/null; then
    car_port=$((port + 1))
    echo '{"rpm": 800, "speed_kmh": 0, "voltage": 14.1, "fuel_pct": 64, "odometer_km": 48213.4, "run_s": 600, "pending": ["P0420"]}' >"$car_state"
    (cd "$root" && exec "$venv_python" "$here/../Tests/IntegrationTests/Support/obd_car.py" --state "$car_state" --port "$car_port") >"$root/car.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$car_port") 2>/dev/null && break; sleep 0.1; done
    say "== the van's OBD-II adapter (ELM327-emulator) on 127.0.0.1:$car_port"
    vehicle=$'[vehicle]\nadapter = "127.0.0.1:'"$car_port"$'"\nparked_poll_seconds = 10\nfault_check_seconds = 30'
fi
# The car's speed follows the receiver's (what driverd saw last), as a real van's would.
follow_car() {
    [[ -n "$vehicle" ]] || return 0
    ctl --json gps 2>/dev/null | python3 -c '
import json, os, sys
fix = json.load(sys.stdin).get("lastFix") or {}
speed = (fix.get("speed") or 0) * 3.6
state = {"rpm": 800 + 60 * speed, "speed_kmh": speed, "voltage": 14.1, "fuel_pct": 64, "odometer_km": 48213.4, "run_s": 600, "pending": ["P0420"]}
json.dump(state, open(sys.argv[1] + ".new", "w")); os.replace(sys.argv[1] + ".new", sys.argv[1])' "$car_state" || true
}

say "== driverd (log: .demo/driverd.log)"
cat >"$root/driverd.toml" <<TOML
[backend]
url = "$backend"
# The fleet's CA and claim token: the unit makes its own key and enrols at its first start (docs/OPERATIONS.md).
ca_file = "$root/fleet-ca/ca.pem"
claim_token = "demo-fleet-claim"
# The reference backend's documented demo driver (docs/dispatch-sim.md).
username = "rider1"
password = "demo-password"
[arrival]
# The daemon performs the arrival itself when the vehicle stops inside a stop's geofence.
mode = "auto"
$(printf '%b' "$vehicle")
TOML
# DEMO_DRIVERD_WRAPPER runs driverd under a tool (scripts/make-order-file.sh: valgrind), slower to start.
# shellcheck disable=SC2086 # the wrapper is a command line
${DEMO_DRIVERD_WRAPPER:-} "$bin/driverd" --socket "$socket" --state-dir "$root/state" --config "$root/driverd.toml" \
    --gpsd "127.0.0.1:$port" --log-target stderr 2>"$root/driverd.log" &
daemon=$!
pids=("$daemon" "${pids[@]}")
for _ in $(seq "$(( ${DEMO_DRIVERD_WRAPPER:+10*}100 ))"); do [[ -S "$socket" ]] && break; sleep 0.1; done
for _ in $(seq 100); do ctl --json route 2>/dev/null | grep -q task-1001 && break; sleep 0.2; done
ctl status | grep '^unit' | sed 's/^/   /' || echo "   the unit did not enrol (see .demo/driverd.log)"

say "== driverd-kiosk: the driver's screen and voice (log: .demo/kiosk.log)"
"$bin/driverd-kiosk" --config "$root/kiosk.toml" --listen "127.0.0.1:${DEMO_KIOSK_PORT:-0}" --socket "$socket" \
    --www "$here/../kiosk/www" --runtime-dir "$root/kiosk" --voice-wav-dir "$root" 2>"$root/kiosk.log" &
pids+=($!)
for _ in $(seq 100); do [[ -s "$root/kiosk/url" ]] && break; sleep 0.1; done
kiosk_url=$(cat "$root/kiosk/url")
echo "   open $kiosk_url"
echo "   (the voice renders its prompts to .demo/prompt-*.wav; .demo/prompts.log has their text)"
screens() { :; }
if [[ -x "$here/../.build/tools/venv/bin/python" ]] && [[ -x /usr/bin/chromium ]]; then
    exec 5> >("$here/../.build/tools/venv/bin/python" "$here/demo-screens.py" "$kiosk_url" "$root/screens" >"$root/screens.log" 2>&1)
    screens() { echo "$1" >&5 2>/dev/null || true; }
    for _ in $(seq 200); do grep -q '^ready' "$root/screens.log" 2>/dev/null && break; sleep 0.1; done
fi

# The scripted driver never taps "arrived": driverd notices the arrival by the stop's geofence
# (arrival.mode = "auto") and performs it; the driver waits for that, then picks up or hands over.
status_is() {
    ctl --json route 2>/dev/null | python3 -c '
import json, sys
route = json.load(sys.stdin)
sys.exit(0 if any(t["id"] == "task-1001" and t["status"] == sys.argv[1] for t in route["tasks"]) else 1)' "$1"
}
steps=("shift start" "accept" "wait ARRIVED_AT_STORE" "pickup" "wait ARRIVED_AT_DESTINATION" "otp 1111" "otp 4812" "deliver")
step=0
shot_step=0
waits=0
last="(the driver opens the app)"
show() {
    [[ -t 1 ]] && printf '\033[H\033[2J' || echo "------------------------------------------------------------"
    echo "driverd demo · $(date +%T) · scripted driver: $last"
    echo
    ctl next || true
    echo
    echo "route:"
    ctl route || true
    echo
    ctl queue | sed 's/^/  /' || true
}
deadline=$((SECONDS + ${DEMO_SECONDS:-240}))
while ((SECONDS < deadline)) && ((step < ${#steps[@]})); do
    action=${steps[$step]}
    case $action in
    wait*)
        if status_is "${action#wait }"; then
            last="driverd: arrival detected by the geofence → ${action#wait }"
            step=$((step + 1))
        else
            last="${last%% · driving*} · driving to the next stop"
        fi ;;
    otp*)
        code=${action#otp }
        if out=$(ctl pod otp "$code" 2>&1); then last="driverctl pod otp $code → $out"; else last="driverctl pod otp $code → $out (the customer reads it again)"; fi
        step=$((step + 1)) ;;
    *)
        # shellcheck disable=SC2086 # "shift start" is two words
        last="driverctl $action → $(ctl $action 2>&1)"
        step=$((step + 1)) ;;
    esac
    # The screen at the journey's key moments: once per step, and once while driving to the customer.
    if ((step != shot_step)); then
        shot_step=$step
        case $step in
        1) screens "next:01-shift-started" ;;
        2) screens "next:02-accepted"; screens "route:03-route-map" ;;
        3) screens "next:04-arrived-at-store" ;;
        4) screens "next:05-picked-up" ;;
        5) screens "next:07-arrived-at-destination" ;;
        6) screens "next:08-wrong-code" ;;
        7) screens "next:09-code-accepted" ;;
        8) screens "next:10-delivered"; screens "night:11-delivered-night" ;;
        esac
    fi
    if ((step == 4)); then
        waits=$((waits + 1))
        ((waits == 3)) && screens "drive:06-driving"
    fi
    follow_car
    show
    sleep 1
done
ctl sync >/dev/null 2>&1 || true
show
echo
if [[ -n "$vehicle" ]]; then
    echo "the van (driverctl vehicle):"
    ctl vehicle | sed 's/^/  /' || true
fi
echo "visits (driverctl visits):"
ctl visits | sed 's/^/  /' || true
echo "arrivals driverd noticed (.demo/driverd.log; the seconds are the receiver's, slow inside the geofence):"
grep -o 'arrival detected at .*slow inside)' "$root/driverd.log" | sed 's/^/  /' || echo "  none"
say "== the backend received (GET $backend/sim/stats)"
python3 -c '
import json, ssl, sys, urllib.request
fleet = ssl.create_default_context(cafile=sys.argv[2])
stats = json.load(urllib.request.urlopen(sys.argv[1] + "/sim/stats", context=fleet))
for update in stats["statusUpdates"]:
    print("   %-10s %-24s by %-8s key %s" % (update["taskId"], update["status"], update.get("source", "?"), update["idempotencyKey"][:8]))
for visit in json.load(urllib.request.urlopen(sys.argv[1] + "/sim/visits", context=fleet)):
    report = visit["report"]
    print("   visit %-18s arrived by %s, %d m from the stop, stayed %d s" % (
        report["stopId"], report["arrivalSource"], report.get("arrivalDistance", -1), report["dwellSeconds"]))
print("   proofs of delivery: %s" % ", ".join("%s %s" % (p["type"], "accepted" if p["accepted"] else "refused") for p in stats["pods"]))
print("   pings: %d unique in %d batches" % (stats["uniquePings"], stats["batches"]))' "$backend" "$root/fleet-ca/ca.pem"
exec 5>&- 2>/dev/null || true
sleep 2
[[ -d "$root/screens" ]] && echo "   the driver's screen at each step: $(ls "$root/screens" | wc -l) screenshots in .demo/screens/"
say "stopping (SIGTERM: driverd flushes and stops; nothing is left running)"
kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true
