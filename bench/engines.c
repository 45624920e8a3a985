/*
 * engines.c - the registry of engine adapters compiled into kura-bench.
 *
 * CMake defines KURA_BENCH_HAVE_<ENGINE> for every engine it found and compiles that
 * engine's adapter file; this table is the only place that lists them.
 */
#include "bench/engine.h"

#include <string.h>

#ifdef KURA_BENCH_HAVE_KURA
extern const bench_engine bench_engine_kura;
#endif
#ifdef KURA_BENCH_HAVE_ITEMS
extern const bench_engine bench_engine_kura_raw, bench_engine_kura_capi, bench_engine_kura_json,
    bench_engine_kura_partiql, bench_engine_kura_json_partiql, bench_engine_kura_capi_noacct,
    bench_engine_kura_capi_throttle;
#endif
#ifdef KURA_BENCH_HAVE_ROCKSDB
extern const bench_engine bench_engine_rocksdb;
#endif
#ifdef KURA_BENCH_HAVE_LEVELDB
extern const bench_engine bench_engine_leveldb;
#endif
#ifdef KURA_BENCH_HAVE_LMDB
extern const bench_engine bench_engine_lmdb;
#endif
#ifdef KURA_BENCH_HAVE_SQLITE
extern const bench_engine bench_engine_sqlite;
#endif

const char *const bench_engine_names[] = {"kura",     "rocksdb",   "leveldb",  "lmdb",
                                          "sqlite",   "kura-raw",  "kura-capi", "kura-json",
                                          "kura-partiql", "kura-json-partiql", "kura-capi-noacct",
                                          "kura-capi-throttle"};
const size_t bench_engine_nnames = sizeof bench_engine_names / sizeof bench_engine_names[0];

static const bench_engine *const compiled[] = {
#ifdef KURA_BENCH_HAVE_KURA
    &bench_engine_kura,
#endif
#ifdef KURA_BENCH_HAVE_ITEMS
    &bench_engine_kura_raw,
    &bench_engine_kura_capi,
    &bench_engine_kura_json,
    &bench_engine_kura_partiql,
    &bench_engine_kura_json_partiql,
    &bench_engine_kura_capi_noacct,
    &bench_engine_kura_capi_throttle,
#endif
#ifdef KURA_BENCH_HAVE_ROCKSDB
    &bench_engine_rocksdb,
#endif
#ifdef KURA_BENCH_HAVE_LEVELDB
    &bench_engine_leveldb,
#endif
#ifdef KURA_BENCH_HAVE_LMDB
    &bench_engine_lmdb,
#endif
#ifdef KURA_BENCH_HAVE_SQLITE
    &bench_engine_sqlite,
#endif
    NULL, /* keeps the array non-empty when no engine is compiled in */
};

const bench_engine *bench_engine_find(const char *name)
{
    for (size_t i = 0; compiled[i] != NULL; i++)
        if (strcmp(compiled[i]->name, name) == 0)
            return compiled[i];
    return NULL;
}
