#!/usr/bin/env bash
# The integration suite (real binaries, gpsd fed by gpsfake, dispatch-sim) and the kiosk's browser tests, side by
# side: both spend most of their time waiting on real-time replays, so together they take little longer than the
# integration suite alone (CI's critical path). Each daemon leaves its log in .build/test-logs.
set -uo pipefail
bin=${1:?usage: test-integration.sh BIN_DIR}
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
logs="$PWD/.build/test-logs"
kiosk_log=.build/kiosk-tests.log
mkdir -p "$logs"

DRIVERD_TEST_LOG_DIR="$logs" scripts/test-kiosk.sh "$bin" >"$kiosk_log" 2>&1 &
kiosk=$!
DRIVERD_BIN_DIR="$bin" DRIVERD_TEST_LOG_DIR="$logs" "$SWIFT" test --skip-build --filter IntegrationTests
integration=$?
wait "$kiosk"
kiosk_status=$?

echo "== the kiosk's browser tests (scripts/test-kiosk.sh, run beside the integration suite)"
cat "$kiosk_log"
if (( integration != 0 || kiosk_status != 0 )); then
    echo "test-integration: the integration suite exited $integration, the kiosk's tests $kiosk_status" >&2
    exit 1
fi
