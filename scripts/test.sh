#!/usr/bin/env bash
# Quick start, step 2: installs what the tests need, builds Release (build/) and an
# ASan+UBSan build (build-asan/), and runs every CTest label in both; in between it builds
# the libFuzzer targets with clang (build-fuzz/) and runs them (label fuzz). The Release run
# comes last and ends with CTest's summary. Exit status: non-zero if anything failed.
#
# The verdict is the same on every run of the same commit: every random choice of the tests
# comes from a fixed seed, printed in the log so a failure replays from it -- KURA_TEST_SEED
# (the C tests and the conformance suite, default 1), KURA_DIFF_SEED (the differential test,
# default 1), KURA_FUZZ_SEED (libFuzzer, default 1; each target runs a fixed number of inputs,
# x KURA_FUZZ_SCALE). Set one to `random` (KURA_FUZZ_SEED: any number) to look further than
# CI does; exploratory fuzzing is scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh all
jobs=$(nproc)
echo "== seeds: KURA_TEST_SEED=${KURA_TEST_SEED:-1} KURA_DIFF_SEED=${KURA_DIFF_SEED:-1}" \
    "KURA_FUZZ_SEED=${KURA_FUZZ_SEED:-1} KURA_FUZZ_SCALE=${KURA_FUZZ_SCALE:-1} (default 1 each) =="

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKURA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
echo "== ASan+UBSan build: ctest (all labels) =="
(cd build-asan && KURA_TEST_SCALE=${KURA_TEST_SCALE_ASAN:-0.25} ctest --output-on-failure -j"$jobs")

# libFuzzer targets (tests/fuzz): clang, ASan+UBSan. Deterministic: each target runs a fixed
# number of inputs from the fixed seed over a copy of its committed corpus and make_seeds'
# inputs (tests/fuzz/run_fuzz.sh), ~3 minutes in all on 2 cores.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DKURA_SANITIZE=ON \
    -DKURA_FUZZ=ON -DKURA_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs"
echo "== libFuzzer build: ctest -L fuzz (seed ${KURA_FUZZ_SEED:-1}, fixed runs x ${KURA_FUZZ_SCALE:-1}) =="
fuzz_rc=0
(cd build-fuzz && ctest -L fuzz --output-on-failure -j"$jobs") || fuzz_rc=$?
# each target's final coverage line: the same figures on every run of a commit
grep -E '^(run_fuzz: |#[0-9]+[[:space:]]+DONE)' build-fuzz/Testing/Temporary/LastTest.log || true
if [ "$fuzz_rc" -ne 0 ]; then exit "$fuzz_rc"; fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
echo "== Release build: ctest (all labels) =="
cd build
exec ctest --output-on-failure -j"$jobs"
