#!/bin/sh
# run_fuzz.sh - runs one libFuzzer target for CTest: run_fuzz.sh <fuzzer> <corpus dir>
# <artifact prefix>. The run lasts $KURA_FUZZ_SECONDS seconds (default 20) so CI can scale
# it; a single input may take at most 10 s. New interesting inputs are added to the corpus
# dir; a crash leaves its reproducer at <artifact prefix>crash-<sha1> and fails the test
# (rerun it with: <fuzzer> <reproducer>).
set -eu
fuzzer=$1
corpus=$2
artifacts=$3
exec "$fuzzer" -max_total_time="${KURA_FUZZ_SECONDS:-20}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus"
