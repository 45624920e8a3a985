#!/usr/bin/env bash
# Quick start, step 2: installs what the tests need, builds Release (build/) and an
# ASan+UBSan build (build-asan/), and runs every CTest label in both; the Release run comes
# last and ends with CTest's summary. Exit status: non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh all
jobs=$(nproc)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKURA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
echo "== ASan+UBSan build: ctest (all labels) =="
(cd build-asan && KURA_TEST_SCALE=${KURA_TEST_SCALE_ASAN:-0.25} ctest --output-on-failure -j"$jobs")

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
echo "== Release build: ctest (all labels) =="
cd build
exec ctest --output-on-failure -j"$jobs"
