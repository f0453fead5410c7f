#!/usr/bin/env bash
# make bench: every figure beside a baseline taken in the same run (this machine is noisy; ratios travel).
set -euo pipefail
bin=${1:?usage: bench.sh RELEASE_BIN_DIR}
"$bin/driverd-bench" rpc --bin "$bin" "${@:2}"
