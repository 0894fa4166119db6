#!/usr/bin/env bash
# Runs scripts/fuzz.sh with the arguments in FUZZ_ARGS ("BUILD_DIR SECONDS
# FUZZ_SOURCE..."), for scripts/run-tests.sh, which runs test scripts
# without arguments (`make fuzz-smoke` sets FUZZ_ARGS).
set -euo pipefail
read -r -a args <<<"${FUZZ_ARGS:?FUZZ_ARGS is not set}"
exec "$(dirname "$0")/fuzz.sh" "${args[@]}"
