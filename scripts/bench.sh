#!/usr/bin/env bash
# bench.sh - builds kura-bench (Release) and runs the standard comparison of kura against
# RocksDB, LevelDB, LMDB and SQLite; the tables and the JSON go to $BUILD_DIR/bench/.
#
# Usage: scripts/bench.sh [kura-bench flags]
#   Flags given here override the standard ones (the last occurrence of a flag wins), e.g.
#   scripts/bench.sh --repeat=3                   medians of 3 runs (~20 min instead of ~7)
#   scripts/bench.sh --num=100000                 a quick run
#   scripts/bench.sh --engines=rocksdb,leveldb    peers only
#   SUITE=index scripts/bench.sh                  the secondary-index workloads (~5 min)
#   SUITE=txn scripts/bench.sh                    the transaction workloads (~3 min)
#   SUITE=ttl scripts/bench.sh                    the Time to Live workloads (~1 min)
#   SUITE=stream scripts/bench.sh                 the change stream workloads (~4 min)
#   SUITE=partiql scripts/bench.sh                PartiQL against the item operations (~6 min)
#   SUITE=capacity scripts/bench.sh               what the capacity accounting costs (~5 min)
# Environment:
#   SUITE      core (default): the storage-core comparison; index: the secondary-index
#              workloads on kura-capi (bench/index/index.h, docs/BENCHMARKS.md "Secondary
#              indexes"), 3 rounds; txn: the transaction workloads on kura-capi
#              (bench/txn/txn.h, docs/BENCHMARKS.md "Transactions"), 3 rounds; ttl: the
#              Time to Live workloads (bench/txn/ttl.c, docs/BENCHMARKS.md "Time to Live");
#              stream: the change stream workloads (bench/txn/stream.c, docs/BENCHMARKS.md
#              "Change streams"), 3 rounds; partiql: PartiQL statements against the item
#              operations they stand for (docs/BENCHMARKS.md "PartiQL"): one kura-bench run
#              of kura-capi, kura-partiql, kura-json and kura-json-partiql, 3 rounds, then 3
#              rounds of kura-http-bench against one kura-server (--relaxed) with GetItem,
#              ExecuteStatement SELECT, UpdateItem and ExecuteStatement UPDATE, then the
#              ratios round by round (bench/partiql_tables.py)
#   BUILD_DIR  the CMake build directory (default: build). It must be a Release build
#              without sanitizers; a missing one is configured as such.
#   BENCH_DIR  where the databases are made (default: $BUILD_DIR/bench/data). Use a real
#              disk file system, not tmpfs: fillsync and recover measure the disk.
#
# Writes $BUILD_DIR/bench/bench-<UTC time>.{txt,json} (SUITE=index: index-<UTC time>,
# SUITE=txn: txn-<UTC time>, SUITE=ttl: ttl-<UTC time>, SUITE=stream: stream-<UTC time>,
# SUITE=partiql: partiql-<UTC time>, with partiql-<UTC time>-http-r<round>.json for the HTTP
# rounds) and points latest.{txt,json} at them.
# Exit status: kura-bench's (0 all runs succeeded, 1 some run failed, 2 bad flags).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
out=$build/bench
data=${BENCH_DIR:-$out/data}

cache=$build/CMakeCache.txt
if [[ -f $cache ]]; then
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")
    sanitize=$(sed -n 's/^KURA_SANITIZE:[A-Z]*=//p' "$cache")
    if [[ $type != Release || $sanitize == ON ]]; then
        echo "bench.sh: $build is a '$type' build (KURA_SANITIZE=$sanitize);" \
             "benchmarks need Release without sanitizers: set BUILD_DIR" >&2
        exit 2
    fi
else
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKURA_SANITIZE=OFF >/dev/null
fi
targets=(kura-bench)
[[ ${SUITE:-core} == partiql || ${SUITE:-core} == capacity ]] &&
    targets+=(kura-server kura-http-bench)
cmake --build "$build" --target "${targets[@]}" -j2

mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
base=$out/bench-$stamp

# The standard comparison (docs/BENCHMARKS.md). compact runs right after the reads, on the
# --num keys of overwrite; fillsync and recover start fresh databases of their own. One
# repeat: on the 2-core machine a 5-engine run at 1M keys takes ~7 minutes, two thirds of it
# SQLite's one-transaction-per-write fills; --repeat=3 gives medians in ~20 minutes.
#
# The index suite: what GSIs cost PutItem (0, 2, 5 GSIs), Query of a GSI against one of the
# table, GSI lag at 50% and 90% of the maximum write rate, a backfill of 1M items; ~100 s a
# round at --num=500000.
#
# The transaction suite: 2-item transactions over two partitions against the same PutItems
# (8 threads, sync), 25-item transactions against BatchWriteItem (sync and relaxed), PutItem
# beside transactions against PutItem alone (sync and relaxed), and 8 threads of transfers
# among 100 hot items; ~55 s a round (the time-based ones run --txn-seconds each).
#
# The change stream suite: PutItem on 2 threads without and with a NEW_AND_OLD_IMAGES stream
# (relaxed and sync), one GetRecords consumer beside 2 PutItem threads at full speed and then
# a drain of what they wrote, and the write -> record latency at 50% of the maximum write
# rate; ~70 s a round (the time-based ones run --txn-seconds each, stream_lag twice).
#
# The PartiQL suite: each statement against the operation it stands for, in the same round:
# INSERT / PutItem (fills the table), SELECT * by the full key / GetItem, UPDATE SET n = n + 1
# by key / UpdateItem ("SET n = n + :one"), on the C API (kura-partiql / kura-capi) and
# through kura_execute's JSON (kura-json-partiql / kura-json); ~1 min a round at 200,000
# items. Then over HTTP, 3 rounds of one kura-server each: 20,000 items loaded, then GetItem,
# ExecuteStatement SELECT, UpdateItem and ExecuteStatement UPDATE by key, with 1 and 32
# connections, 1 s warm-up and 5 s measured each (~55 s a round).
case ${SUITE:-core} in
core)
    standard=(--engines=all
              --workloads=fillseq,fillrandom,overwrite,readrandom,readmissing,seekrandom,readseq,compact,fillsync,recover
              --num=1000000 --key-size=16 --value-size=100 --threads=1 --repeat=1
              --sync-num=20000 --partitions=4 --memtable-mb=64 --cache-mb=32 --seed=301) ;;
index)
    base=$out/index-$stamp
    standard=(--engines=kura-capi
              --workloads=putitem_gsi0,putitem_gsi2,putitem_gsi5,query_base,query_gsi,gsi_lag,backfill
              --num=500000 --backfill-num=1000000 --lag-gsis=5 --lag-seconds=10
              --gsi-projection=all --repeat=3 --partitions=4 --memtable-mb=64 --cache-mb=32
              --seed=301) ;;
txn)
    base=$out/txn-$stamp
    standard=(--engines=kura-capi
              --workloads=pairs_put,pairs_txn,batch25_sync,txn25_sync,batch25,txn25,put_solo_sync,put_mixed_sync,put_solo,put_mixed,txn_hot
              --num=100000 --sync-num=20000 --threads=8 --txn-seconds=5 --repeat=3
              --partitions=4 --memtable-mb=64 --cache-mb=32 --seed=301) ;;
ttl)
    base=$out/ttl-$stamp
    standard=(--engines=kura-capi
              --workloads=ttl_sweep,ttl_sweep_sync,ttl_put_solo,ttl_put_sweep
              --num=500000 --sync-num=20000 --threads=2 --txn-seconds=5 --repeat=3
              --partitions=4 --memtable-mb=64 --cache-mb=32 --seed=301) ;;
stream)
    base=$out/stream-$stamp
    standard=(--engines=kura-capi
              --workloads=stream_put_solo,stream_put,stream_put_solo_sync,stream_put_sync,stream_read,stream_lag,stream_lag_sync,stream_over_solo,stream_over
              --threads=2 --txn-seconds=5 --repeat=3
              --partitions=4 --memtable-mb=64 --cache-mb=32 --seed=301) ;;
partiql)
    base=$out/partiql-$stamp
    standard=(--engines=kura-capi,kura-partiql,kura-json,kura-json-partiql
              --workloads=putitem,getitem,updateitem --num=200000 --repeat=3
              --partitions=4 --memtable-mb=64 --cache-mb=32 --seed=301) ;;
capacity)
    base=$out/capacity-$stamp
    standard=(--engines=kura-capi,kura-capi-noacct,kura-capi-throttle
              --workloads=putitem,getitem --num=200000 --repeat=3
              --partitions=4 --memtable-mb=64 --cache-mb=32 --seed=301) ;;
*) echo "bench.sh: SUITE is core, index, txn, ttl, stream, partiql or capacity, not '$SUITE'" >&2
   exit 2 ;;
esac
set +e
"$build/bin/kura-bench" "${standard[@]}" --dir="$data" --json="$base.json" "$@" \
    | tee "$base.txt"
status=${PIPESTATUS[0]}
set -e

if [[ ${SUITE:-core} == partiql ]]; then
    http=()
    mkdir -p "$data/http"
    for rep in 1 2 3; do
        json=$base-http-r$rep.json
        "$build/bin/kura-http-bench" --name=kura-relaxed --round="$rep/3" \
            --workloads=get,pq_get,update,pq_update --connections=1,32 --duration=5 --warmup=1 \
            --items=20000 --load-connections=32 --threads=1 --starts=1 --settle=0 \
            --dir="$data/http" --json="$json" \
            -- "$build/bin/kura-server" --data {dir} --port {port} --relaxed \
            | tee -a "$base.txt" || status=1
        http+=(--http "$json")
    done
    python3 "$root/bench/partiql_tables.py" "$base.json" "${http[@]}" | tee -a "$base.txt" \
        || status=1
fi

if [[ ${SUITE:-core} == capacity ]]; then
    # the heat report's answer time after 10 M distinct partition keys
    "$build/bin/kura-bench" --engines=kura-capi --workloads=heatreport --num=10000000 \
        --repeat=1 --partitions=4 --memtable-mb=64 --cache-mb=32 --seed=301 --dir="$data" \
        --json="$base-heat.json" | tee -a "$base.txt" || status=1
    # over HTTP: kura-server as it ships, without the accounting, and with --throttle
    mkdir -p "$data/http"
    for rep in 1 2 3; do
        for variant in on off throttle; do
            flags=(--relaxed)
            [[ $variant == off ]] && flags+=(--capacity-accounting-off)
            [[ $variant == throttle ]] && flags+=(--throttle)
            "$build/bin/kura-http-bench" --name="kura-acct-$variant" --round="$rep/3" \
                --workloads=put,get --connections=1,32 --duration=5 --warmup=1 \
                --items=20000 --load-connections=32 --threads=1 --starts=1 --settle=0 \
                --dir="$data/http" --json="$base-http-$variant-r$rep.json" \
                -- "$build/bin/kura-server" --data {dir} --port {port} "${flags[@]}" \
                | tee -a "$base.txt" || status=1
        done
    done
    python3 "$root/bench/capacity_tables.py" "$base" | tee -a "$base.txt" || status=1
fi

if [[ -f $base.json ]]; then
    ln -sfn "$(basename "$base.json")" "$out/latest.json"
    ln -sfn "$(basename "$base.txt")" "$out/latest.txt"
    echo "bench.sh: results in $base.json and $base.txt"
fi
exit "$status"
