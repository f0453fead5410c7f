#!/usr/bin/env bash
# Makes packaging/driverd.order.gz: the functions driverd runs, the start's first, then the rest hottest first,
# recorded by valgrind's callgrind on the release build through
# - `make demo` (start, login and sync, a drive with its stops, driver actions, proof of delivery, the uplink,
#   the kiosk's calls, shutdown), with a dump once the socket is served to separate the start;
# - `make bench`'s GPS scenarios on the real receiver logs (no backend, flags on the command line), its RPC and
#   driver-action runs, shortened.
# scripts/release-build.sh lays these functions out together: the kernel maps 64 KiB around every page touched,
# so each function run from elsewhere in the binary costs up to 16 pages of RSS (docs/LEAN.md, "Memory").
#
# Run it again when the daemon's code changed much; a stale list only costs memory (unknown names are skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
scripts/release-build.sh
release=$(scripts/release-build.sh --show-bin-path)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir "$out/bin" "$out/demo" "$out/profiles"
# The programs as built, and driverd under callgrind without its debug information (Debian 12's valgrind cannot
# read the toolchain's DWARF 5; the symbol table, which callgrind names functions by, stays). Names are kept
# mangled, as the linker knows them; only which functions ran and their cost are recorded.
for program in dispatch-sim driverctl driverd-kiosk nmea-synth driverd-bench; do
    ln -s "$release/$program" "$out/bin/$program"
    ln -s "$release/$program" "$out/demo/$program"
done
objcopy --strip-debug "$release/driverd" "$out/driverd"
ln -s "$out/driverd" "$out/demo/driverd"
callgrind="valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no --compress-pos=no --dump-line=no"
printf '#!/bin/sh\nexec %s --callgrind-out-file=%s/profiles/bench.%%p.out %s/driverd "$@"\n' "$callgrind" "$out" "$out" >"$out/bin/driverd"
chmod +x "$out/bin/driverd"

echo "== make demo, driverd under callgrind"
(
    for _ in $(seq 600); do [[ -S .demo/driverd.sock ]] && break; sleep 0.2; done
    sleep 3
    callgrind_control -d >/dev/null 2>&1 || true
) &
DEMO_DRIVERD_WRAPPER="$callgrind --callgrind-out-file=$out/profiles/demo.out" DEMO_SECONDS=${DEMO_SECONDS:-400} \
    scripts/demo.sh "$out/demo" >"$out/demo.log" 2>&1 || { tail -30 "$out/demo.log"; exit 1; }
wait

echo "== make bench's scenarios, shortened, driverd under callgrind"
nmea="$(cd .. && pwd)/shared/testdata/nmea"
"$release/driverd-bench" gps --bin "$out/bin" --only logs --seconds 20 --warmup 5 \
    --stationary "$nmea/signalk-gps.log" --moving "$nmea/20100411_Geko_Regensburg.txt" >/dev/null
"$release/driverd-bench" rpc --bin "$out/bin" --requests 50 --rounds 1 --clients 1 --clients 5 >/dev/null
"$release/driverd-bench" workflow --bin "$out/bin" --tasks 2 >/dev/null

# One "fn=" block per function that ran; its first cost line is "<line> <instructions>". Called functions
# ("cfn=") ran too. The demo's start first (demo.out.1), then everything else, hottest first.
python3 - "$out/profiles" >"$out/order" <<'PYTHON'
import collections, glob, os, sys

def costs(path):
    cost = collections.Counter()
    current = None
    for line in open(path, errors="replace"):
        if line.startswith("fn="):
            current = line[3:].strip()
            cost[current] += 0
        elif line.startswith("cfn="):
            cost[line[4:].strip()] += 0
        elif current and line[:1].isdigit():
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                cost[current] += int(parts[1])
    return cost

start = glob.glob(os.path.join(sys.argv[1], "demo.out.1"))
rest = collections.Counter()
for path in glob.glob(os.path.join(sys.argv[1], "*.out*")):
    if path not in start:
        rest.update(costs(path))
seen = set()
for cost in [costs(path) for path in start] + [rest]:
    for name, _ in sorted(cost.items(), key=lambda item: -item[1]):
        # callgrind names a function "0x..." when it has no symbol, and adds "'2" for recursion levels.
        name = name.split("'")[0]
        if name and not name.startswith("0x") and name not in seen:
            seen.add(name)
            print(name)
PYTHON
gzip -9n <"$out/order" >packaging/driverd.order.gz
echo "packaging/driverd.order.gz: $(gzip -dc packaging/driverd.order.gz | wc -l) functions"
