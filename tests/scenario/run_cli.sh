#!/bin/sh
# run_cli.sh - runs the scenario vectors (shared/scenarios) through the `kura` CLI on a fresh
# temporary database directory, removed afterwards.
#
#   run_cli.sh KURA_BINARY SCENARIOS_DIR [run_scenarios.py options...]
#
# Each request runs as `KURA_BINARY --data DIR exec OPERATION` (the issue's command); the runner prints
# one FAIL line per failed step and ends with "N passed, M failed[, K skipped]".
set -eu
kura=$1
scenarios=$2
shift 2
if [ ! -f "$scenarios/run_scenarios.py" ]; then
  echo "run_cli.sh: no scenario vectors at $scenarios (../shared/scenarios beside the checkout)" >&2
  exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/kura-scenarios.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
python3 "$scenarios/run_scenarios.py" --cli "$kura --data $dir/db exec" "$@"
