#!/usr/bin/env bash
# run_fuzz.sh - This file contains the deterministic libFuzzer run that CTest uses (label
# fuzz): run_fuzz.sh <fuzzer> <runs> <work dir> <artifact prefix> <seed dir>...
#
# CI must give the same verdict on every run of a commit, so this is not exploratory fuzzing
# (that is scripts/fuzz.sh): the fuzzer starts from a fixed seed (-seed, $KURA_FUZZ_SEED,
# default 1) and stops after a fixed number of inputs (-runs: <runs> x $KURA_FUZZ_SCALE,
# default 1), in a single process (no -jobs, no -max_total_time). Given the same binary and
# the same starting corpus, libFuzzer then mutates the same inputs in the same order, which
# also needs:
#  - the same starting corpus: <work dir> is emptied and refilled with the files of every
#    <seed dir> (the committed corpus/<target>/ and make_seeds' output). libFuzzer adds the
#    inputs it finds to the corpus dir it is given, so it only ever gets this copy, never a
#    directory of the source tree, and never one a previous run has grown;
#  - no corpus reload (-reload=0): libFuzzer otherwise rereads its corpus dir every second,
#    at a point that depends on the clock;
#  - the same compared values: -fsanitize=fuzzer traces comparisons and memcmp/strcmp calls,
#    and the values compared become mutation material. Pointers are among them, so address
#    space randomisation is turned off (setarch -R), and the stack starts at the same place
#    because the fuzzer runs from <work dir> with relative arguments and a fixed environment
#    (env -i: the size of argv, of the environment and of the executable's path all move the
#    stack). File descriptors are among them too, so the fuzzer inherits none but 0-2: CTest
#    passes its own (a log file, a pipe; with -j, others that come and go), which would
#    change the numbers open() returns.
# A finding fails the test; its reproducer is copied to <artifact prefix>crash-<sha1> (or
# leak-, timeout-, oom-), and the log says how to rerun it. A single input may take 60 s:
# well above any input's time even on a loaded machine, so only a real hang times out.
set -euo pipefail
if [ $# -lt 5 ]; then
    echo "usage: $0 <fuzzer> <runs> <work dir> <artifact prefix> <seed dir>..." >&2
    exit 2
fi
abs() { # an absolute path, so the names still hold after the cd below
    case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac
}
fuzzer=$(abs "$1")
runs=$2
work=$(abs "$3")
artifacts=$(abs "$4")
shift 4

seed=${KURA_FUZZ_SEED:-1}
scale=${KURA_FUZZ_SCALE:-1}
runs=$(awk -v n="$runs" -v s="$scale" 'BEGIN { r = int(n * s); print r < 1 ? 1 : r }')
name=$(basename "$fuzzer")

rm -rf "$work"
mkdir -p "$work/corpus" "$work/tmp" "$work/artifacts"
i=0
for dir in "$@"; do
    if [ ! -d "$dir" ]; then
        echo "run_fuzz: seed dir $dir is missing" >&2
        exit 1
    fi
    i=$((i + 1))
    for f in "$dir"/*; do # a prefix per seed dir: two dirs may use the same file names
        if [ -f "$f" ]; then cp "$f" "$work/corpus/s$i.$(basename "$f")"; fi
    done
done
ninputs=$(ls "$work/corpus" | wc -l)
if [ "$ninputs" -eq 0 ]; then
    echo "run_fuzz: no seed inputs in $*" >&2
    exit 1
fi
ln -s "$fuzzer" "$work/fuzzer"

norand=
if setarch "$(uname -m)" -R true 2>/dev/null; then
    norand="setarch $(uname -m) -R"
else
    echo "run_fuzz: WARNING: setarch -R failed, address randomisation stays on;" \
        "this run may not repeat exactly" >&2
fi

echo "run_fuzz: $name -seed=$seed -runs=$runs over $ninputs seed inputs ($*)"
cd "$work"
rc=0
(
    # in a subshell, which has read all of its commands: bash reads this script on fd 255
    for fd in /proc/$BASHPID/fd/*; do
        n=${fd##*/}
        if [ "$n" -gt 2 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
    done
    exec env -i PATH=/usr/bin:/bin TMPDIR=tmp $norand ./fuzzer -seed="$seed" -runs="$runs" \
        -reload=0 -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=artifacts/ corpus
) || rc=$?
if [ "$rc" -ne 0 ]; then
    mkdir -p "$(dirname "$artifacts")"
    for f in artifacts/*; do
        [ -f "$f" ] || continue
        cp "$f" "$artifacts$(basename "$f")"
        echo "run_fuzz: reproducer $artifacts$(basename "$f"); rerun it with: $fuzzer" \
            "$artifacts$(basename "$f")"
    done
    echo "run_fuzz: $name failed (exit $rc); the same run again: KURA_FUZZ_SEED=$seed" \
        "KURA_FUZZ_SCALE=$scale ctest -R '^$name\$'"
fi
exit "$rc"
