#!/usr/bin/env bash
# fuzz.sh - This file contains kura's exploratory fuzzing: scripts/fuzz.sh [SECONDS [TARGET...]]
#
# CI's fuzzing (ctest -L fuzz, in scripts/test.sh) is deterministic: a fixed seed and a fixed
# number of runs, so it gives the same verdict on every run of a commit and never refuses a
# change for a bug the change did not touch. Finding new bugs is this script's job: it builds
# the libFuzzer targets (clang, ASan+UBSan, build-fuzz/) if needed and runs every target (or
# the TARGETs named) for SECONDS each (default 300), from a random seed that it prints
# ($KURA_FUZZ_SEED to choose one), $KURA_FUZZ_JOBS targets at a time (default: one per core).
# Each target starts from its committed corpus (tests/fuzz/corpus/<target>/, read only) and,
# for the format readers, make_seeds' inputs; what it finds goes to a scratch directory,
# build-fuzz/fuzz-explore/<seed>/:
#   <target>/           new inputs (new coverage), not committed automatically
#   <target>-crash-...  reproducers of findings (also leak-, timeout-, oom-)
#   <target>.log        libFuzzer's output
# The summary at the end says how to minimise a reproducer and where it goes: committed
# into tests/fuzz/corpus/<target>/ together with the fix, it is replayed in every build
# (fuzz_replay_<target>) and by CI's fuzz stage. Exit status: 1 if any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-300}
shift || true
all=(wal_reader_fuzz sst_reader_fuzz manifest_fuzz item_codec_fuzz expr_parse_fuzz execute_fuzz
     jdoc_fuzz partiql_parse_fuzz)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi
jobs=${KURA_FUZZ_JOBS:-$(nproc)}
# libFuzzer takes 0 as "pick one yourself" and would not print it before it starts
seed=${KURA_FUZZ_SEED:-$(($(od -An -N4 -tu4 /dev/urandom) % 2147483646 + 1))}

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DKURA_SANITIZE=ON \
    -DKURA_FUZZ=ON -DKURA_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target kura_fuzz >/dev/null

out=$PWD/build-fuzz/fuzz-explore/$seed
rm -rf "$out"
mkdir -p "$out/tmp"
build-fuzz/bin/make_seeds "$out/seeds" >/dev/null
echo "fuzz.sh: seed $seed, $secs s per target, $jobs at a time, findings in $out"
echo "         (this run again: KURA_FUZZ_SEED=$seed scripts/fuzz.sh $secs ${targets[*]})"

# One target: its new inputs go to the first corpus dir, the only one libFuzzer writes to.
# Its exit status goes to <target>.rc.
fuzz_one() {
    local t=$1 dirs=() rc=0
    mkdir -p "$out/$t"
    if [ -d "tests/fuzz/corpus/$t" ]; then dirs+=("tests/fuzz/corpus/$t"); fi
    if [ -d "$out/seeds/$t" ]; then dirs+=("$out/seeds/$t"); fi
    TMPDIR=$out/tmp "build-fuzz/bin/$t" -seed="$seed" -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/$t-" "$out/$t" \
        "${dirs[@]}" >"$out/$t.log" 2>&1 || rc=$?
    echo "$rc" >"$out/$t.rc"
}

for t in "${targets[@]}"; do
    if [ ! -x "build-fuzz/bin/$t" ]; then
        echo "fuzz.sh: no fuzz target $t (targets: ${all[*]})" >&2
        exit 2
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    echo "fuzz.sh: $t ..."
    fuzz_one "$t" &
done
wait

found=0
for t in "${targets[@]}"; do
    rc=$(cat "$out/$t.rc")
    new=$(find "$out/$t" -type f | wc -l)
    finds=$(find "$out" -maxdepth 1 -name "$t-*" -type f | sort)
    if [ "$rc" -eq 0 ] && [ -z "$finds" ]; then
        echo "fuzz.sh: $t: nothing found; $new new inputs in $out/$t/"
        continue
    fi
    found=1
    echo "fuzz.sh: $t: FOUND SOMETHING (exit $rc, see $out/$t.log):"
    for f in $finds; do echo "    $f"; done
done

if [ "$found" -ne 0 ]; then
    cat <<EOF

A finding is a bug to fix, with its reproducer committed alongside the fix:
  1. reproduce:  build-fuzz/bin/<target> <reproducer>
  2. minimise:   build-fuzz/bin/<target> -minimize_crash=1 -runs=100000 \\
                     -exact_artifact_path=<target>-min <reproducer>
     (a leak or timeout: keep the reproducer as it is, or shorten it by hand)
  3. fix the bug, then commit the minimised file, under a name that says what it is, as
     tests/fuzz/corpus/<target>/<name> in the same change. Every build then replays it
     (ctest -R fuzz_replay_<target>), and so does CI's fuzz stage.
EOF
fi
cat <<EOF

New inputs that reached new code are in
  $out/<target>/
To keep the useful ones, merge them into the committed corpus (only the inputs that add
coverage are copied; for a format reader, create tests/fuzz/corpus/<target>/ first):
  build-fuzz/bin/<target> -merge=1 tests/fuzz/corpus/<target> $out/<target>
EOF
exit "$found"
