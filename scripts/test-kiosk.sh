#!/usr/bin/env bash
# The kiosk's tests: Debian's chromium, headless, driven by Playwright for Python, against the real stack
# (dispatch-sim, gpsd fed by gpsfake, driverd, driverd-kiosk; see Tests/kiosk/stack.py). Screenshots of every
# view at 800x480, 1024x600 and 600x1024, day and night, go to .build/kiosk-screens. Each test has a stack of its
# own on free ports, so KIOSK_WORKERS (default 4; pytest-xdist) run at once: they mostly wait on the stack's
# real-time drives, using a quarter of one core between them.
set -euo pipefail
bin=${1:?usage: test-kiosk.sh BIN_DIR [pytest args]}
shift
cd "$(dirname "$0")/.."
scripts/install-deps.sh
DRIVERD_BIN_DIR="$bin" .build/tools/venv/bin/python -m pytest -q -p no:cacheprovider -n "${KIOSK_WORKERS:-4}" Tests/kiosk "$@"
