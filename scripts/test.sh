#!/usr/bin/env bash
# Quick start, step 2: installs what the tests need, builds Release (build/) and an
# ASan+UBSan build (build-asan/), and runs every CTest label in both; in between it builds
# the libFuzzer targets with clang (build-fuzz/) and runs them (label fuzz,
# KURA_FUZZ_SECONDS each, default 20). The Release run comes last and ends with CTest's
# summary. Exit status: non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh all
jobs=$(nproc)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKURA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
echo "== ASan+UBSan build: ctest (all labels) =="
(cd build-asan && KURA_TEST_SCALE=${KURA_TEST_SCALE_ASAN:-0.25} ctest --output-on-failure -j"$jobs")

# libFuzzer targets of the format readers (tests/fuzz): clang, ASan+UBSan, each fuzzer runs
# for KURA_FUZZ_SECONDS seconds (default 20) from seeds written by make_seeds.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DKURA_SANITIZE=ON \
    -DKURA_FUZZ=ON -DKURA_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs"
echo "== libFuzzer build: ctest -L fuzz (${KURA_FUZZ_SECONDS:-20} s per target) =="
(cd build-fuzz && KURA_FUZZ_SECONDS=${KURA_FUZZ_SECONDS:-20} ctest -L fuzz --output-on-failure -j"$jobs")

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
echo "== Release build: ctest (all labels) =="
cd build
exec ctest --output-on-failure -j"$jobs"
