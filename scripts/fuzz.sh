#!/usr/bin/env bash
# `make fuzz`: builds libFuzzer's binary (Fuzz/, -sanitize=fuzzer,address) and runs each target of
# Sources/FuzzTargets for FUZZ_SECONDS (default 60; FUZZ_TARGETS picks some), starting from the corpus in the
# repository (Tests/FuzzCorpus/<target>, which it never writes) with a scratch corpus in .build-fuzz/corpus.
# A crash, a leak or an input slower than FUZZ_TIMEOUT seconds (default 1) stops that target and leaves the input
# in .build-fuzz/crashes: add it to Tests/FuzzCorpus/<target>/ with the fix, so `make test` replays it for good.
# FUZZ_RUNS stops each target after that many executions instead (FUZZ_SECONDS then bounds it at most).
# FUZZ_CONFIG=release fuzzes the optimised build (.build-fuzz/release), for long runs: the Swift code runs several
# times faster there, and optimised code is what ships.
# Prints each target's executions, rate, coverage and slowest input (ms, every input of the corpora timed again at
# the end); exits 1 when any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-1}
build=.build-fuzz
config=${FUZZ_CONFIG:-debug}
(cd Fuzz && swift build -c "$config" --build-path "../$build" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library) || exit 1
binary="$build/$config/driverd-fuzz"
targets=${FUZZ_TARGETS:-$(sed -n 's/.*Target(name: "\([a-z0-9-]*\)".*/\1/p' Sources/FuzzTargets/FuzzTargets.swift)}
mkdir -p "$build/crashes" "$build/logs"
failed=0
printf '%-18s %12s %10s %8s %10s %s\n' target executions "exec/s" cov "slowest" result
for target in $targets; do
    scratch="$build/corpus/$target"
    mkdir -p "$scratch"
    log="$build/logs/$target.log"
    DRIVERD_FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=1 "$binary" "$scratch" "Tests/FuzzCorpus/$target" \
        -max_total_time="$seconds" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} -timeout="$timeout" -rss_limit_mb=2048 -report_slow_units=1 -print_final_stats=1 \
        -artifact_prefix="$build/crashes/$target-" >"$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    # libFuzzer times inputs in whole seconds; the goal is 100 ms. So every input of both corpora (the fuzzer keeps
    # one for each new path it found) runs once more, timed in milliseconds. Each batch starts with a seed whose time
    # is dropped: the first input of a process pays its start-up.
    warm=$(find "Tests/FuzzCorpus/$target" -type f | sort | head -1)
    slowest=$(find "$scratch" "Tests/FuzzCorpus/$target" -type f -print0 \
        | DRIVERD_FUZZ_TARGET=$target xargs -0 -n 500 sh -c 'binary=$1; shift; "$binary" "$@" 2>&1 | grep "^Executed " | tail -n +2' _ "$binary" "$warm" \
        | sed -n 's/^Executed .* in \([0-9]*\) ms$/\1/p' | sort -n | tail -1)
    result=ok
    if [ "$status" -ne 0 ]; then
        result="FOUND (status $status): $(grep -m1 -E 'ERROR:|Fatal error|SUMMARY' "$log")"
        failed=1
    fi
    printf '%-18s %12s %10s %8s %10s %s\n' "$target" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${slowest:-?} ms" "$result"
done
exit $failed
