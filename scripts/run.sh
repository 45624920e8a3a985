#!/usr/bin/env bash
# Quick start, step 1: installs what kura needs, builds Release into build/, and runs the main
# job: for now the embedded-database demo on ./data (write, close, reopen, read back).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh all
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
exec build/bin/kura-demo ./data
