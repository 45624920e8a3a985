#!/usr/bin/env bash
# Quick start, step 1: installs what kura needs, builds Release into build/, and runs the main
# job: kura-server, a DynamoDB endpoint on http://127.0.0.1:8000 with its data in ./data,
# until Ctrl-C (a clean shutdown). Extra arguments go to kura-server (kura-server --help).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh all
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
exec build/bin/kura-server --data ./data --host 127.0.0.1 --port 8000 "$@"
