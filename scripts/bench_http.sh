#!/usr/bin/env bash
# bench_http.sh - kura-server against dynalite over HTTP (issue 4's throughput race):
# PutItem, GetItem and Query with 1 and 32 keep-alive connections, start time to the first
# successful request, idle RSS. Prints markdown tables with the kura/dynalite ratios and
# writes docs/bench/<UTC date>-http.json (docs/BENCHMARKS.md, "HTTP: kura-server vs dynalite").
#
# Usage: scripts/bench_http.sh [kura-http-bench flags]
#   Flags given here are passed to every run and override the standard ones, e.g.
#   REPEAT=1 scripts/bench_http.sh --duration=2 --items=2000     a quick run (~1.5 min)
# Environment:
#   BUILD_DIR  the CMake build directory (default: build). It must be a Release build
#              without sanitizers; a missing one is configured as such.
#   BENCH_DIR  where the servers' data directories are made (default: $BUILD_DIR/bench/http).
#              Use a real disk file system: kura --sync measures fsync.
#   OUT_JSON   the combined JSON (default: docs/bench/<UTC date>-http.json)
#   REPEAT     rounds over the servers (default 3); every figure is the median of the rounds.
#              The servers take turns within a round, so a burst of other load on the
#              machine hits all of them rather than one.
#   SERVERS    which servers to run, in order (default: "kura-sync kura-relaxed dynalite");
#              kura-sync-tN / kura-relaxed-tN run kura-server with --threads N
#
# dynalite (npm package, pinned below) is installed into bench/.peers/dynalite on first use
# and runs on LevelDB with --path; its writes are never fsynced. Exit status: 0 when every
# run succeeded, 1 otherwise (the tables are printed all the same).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
data=${BENCH_DIR:-$build/bench/http}
out_json=${OUT_JSON:-$root/docs/bench/$(date -u +%Y-%m-%d)-http.json}
servers=${SERVERS:-kura-sync kura-relaxed dynalite}
repeat=${REPEAT:-3}
dynalite_version=4.0.0
peers=$root/bench/.peers/dynalite
dynalite_cli=$peers/node_modules/dynalite/cli.js

cache=$build/CMakeCache.txt
if [[ -f $cache ]]; then
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")
    sanitize=$(sed -n 's/^KURA_SANITIZE:[A-Z]*=//p' "$cache")
    if [[ $type != Release || $sanitize == ON ]]; then
        echo "bench_http.sh: $build is a '$type' build (KURA_SANITIZE=$sanitize);" \
             "benchmarks need Release without sanitizers: set BUILD_DIR" >&2
        exit 2
    fi
else
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKURA_SANITIZE=OFF >/dev/null
fi
cmake --build "$build" --target kura-server kura-http-bench -j2

if [[ ! -f $dynalite_cli ]] || ! grep -q "\"version\": \"$dynalite_version\"" \
        "$peers/node_modules/dynalite/package.json"; then
    echo "bench_http.sh: installing dynalite@$dynalite_version into $peers" >&2
    mkdir -p "$peers"
    npm install --prefix "$peers" --no-audit --no-fund --loglevel=error \
        "dynalite@$dynalite_version" >&2
fi

mkdir -p "$data" "$(dirname "$out_json")"
runs=$data/runs
rm -rf "$runs"
mkdir -p "$runs"

# The standard run: 20,000 items loaded (1,000 partition keys of 20), then each workload with
# 1 and 32 connections for 1 s of warm-up and 5 s measured; 5 timed starts; 3 s of quiet
# before the idle RSS; a restart on the data at the end. ~50 s per kura round, ~80 s per
# dynalite round.
standard=(--workloads=put,get,query --connections=1,32 --duration=5 --warmup=1
          --items=20000 --load-connections=32 --threads=1 --starts=5 --settle=3 --restart
          --dir="$data")

status=0
for ((rep = 1; rep <= repeat; rep++)); do
for name in $servers; do
    # kura-sync, kura-relaxed: kura-server's defaults (--threads = cores) with that
    # durability; kura-sync-tN / kura-relaxed-tN: the same with --threads N.
    case $name in
    kura-sync | kura-relaxed | kura-sync-t[0-9]* | kura-relaxed-t[0-9]*)
        mode=${name#kura-}
        mode=${mode%%-t*}
        cmd=("$build/bin/kura-server" --data {dir} --port {port} "--$mode")
        if [[ $name == *-t[0-9]* ]]; then
            cmd+=(--threads "${name##*-t}")
        fi
        ;;
    dynalite) cmd=(node "$dynalite_cli" --port {port} --path {dir}) ;;
    *) echo "bench_http.sh: unknown server '$name'" >&2; exit 2 ;;
    esac
    "$build/bin/kura-http-bench" --name="$name" --round="$rep/$repeat" "${standard[@]}" "$@" \
        --log="$runs/$name.log" --json="$runs/$name-r$rep.json" -- "${cmd[@]}" \
        | tee "$runs/$name-r$rep.txt" || status=1
done
done

command="REPEAT=$repeat SERVERS=\"$servers\" scripts/bench_http.sh${*:+ $*}"
python3 "$root/bench/http/http_tables.py" --command="$command" --dir="$data" \
    --out="$out_json" "$runs"/*.json || status=1
echo "bench_http.sh: results in $out_json (logs and per-server JSON in $runs)" >&2
exit "$status"
