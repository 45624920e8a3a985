/*
 * bench.h - the shared vocabulary of kura-bench: the configuration parsed from the command
 * line, and the figures that one run of one workload produces.
 *
 * kura-bench runs a list of workloads against a list of engines, --repeat times. Every
 * (repeat, engine, workload) triple runs in its own forked process (runner.c): it opens the
 * engine on the directory that the previous workload of the list left behind, runs, closes
 * the engine, and sends one bench_run back to the parent through a pipe. A bench_run is
 * therefore plain data (no pointers). report.c turns the runs into a table and JSON.
 */
#ifndef KURA_BENCH_H
#define KURA_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_ENGINES 8
#define BENCH_MAX_WORKLOADS 32
#define BENCH_MAX_THREADS 64
#define BENCH_MAX_EXTRAS 32

struct bench_engine;
struct bench_workload;

/* Everything the command line sets. Strings are borrowed from argv (or are literals) and
 * live as long as the process. */
typedef struct bench_config {
    const struct bench_engine *engines[BENCH_MAX_ENGINES];
    size_t nengines;
    const struct bench_workload *workloads[BENCH_MAX_WORKLOADS];
    size_t nworkloads;
    uint64_t num;        /* keys 0..num-1; ops of fill/read workloads */
    uint32_t key_size;   /* bytes per key */
    uint32_t value_size; /* bytes per value */
    uint32_t threads;    /* threads of the workloads that take --threads */
    uint32_t repeat;     /* runs of the whole list; the report gives medians */
    uint64_t sync_num;   /* writes of fillsync, all threads together */
    uint32_t partitions; /* kura's default_partitions */
    uint32_t memtable_mb;
    uint32_t cache_mb;
    uint64_t seed;
    /* the index workloads (bench/index.h) */
    uint64_t backfill_num; /* items loaded before the backfill's CreateIndex */
    uint32_t lag_gsis;     /* GSIs of gsi_lag's table */
    uint32_t lag_seconds;  /* length of each open-loop phase of gsi_lag */
    bool gsi_keys_only;    /* GSIs project KEYS_ONLY instead of ALL */
    /* the transaction workloads (bench/txn/txn.h) */
    uint32_t txn_seconds;  /* length of the time-based ones (put_solo/mixed, txn_hot) */
    const char *dir;       /* parent of the per-run database directories */
    const char *json_path; /* NULL: no JSON file */
    const char *command;   /* the command line, for the report; owned by main.c */
    bool quiet;            /* no progress lines on stderr but for failed runs */
} bench_config;

typedef enum bench_run_state {
    BENCH_RUN_OK = 0,
    BENCH_RUN_SKIPPED, /* not applicable to this engine (reason in `error`) */
    BENCH_RUN_FAILED,  /* the error, or how the child process died, is in `error` */
} bench_run_state;

/* A figure a workload reports beyond the common ones (the index workloads' lag percentiles,
 * drain time, backfill rate...): a name of at most 31 bytes and its value. A workload
 * reports the same names in the same order in every round; medians are taken name by name. */
typedef struct bench_extra {
    char name[32];
    double value;
} bench_extra;

/* The figures of one (repeat, engine, workload). */
typedef struct bench_run {
    bench_run_state state;
    uint32_t threads;        /* threads that ran the operations */
    uint64_t ops;            /* operations timed */
    uint64_t found;          /* reads/seeks that found a key (0 for the others) */
    uint64_t bytes;          /* logical bytes behind mb_per_sec */
    double seconds;          /* wall time of the timed part */
    double ops_per_sec;
    double mb_per_sec;       /* bytes / seconds / 2^20 */
    double p50_us, p99_us;   /* per-operation latency */
    uint64_t bytes_on_disk;  /* the engine's directory after it was closed */
    uint64_t peak_rss_bytes; /* VmHWM of the process that ran the workload */
    uint32_t nextras;
    bench_extra extras[BENCH_MAX_EXTRAS];
    char error[256];
} bench_run;

/* The run of (repeat r, engine e, workload w) in the array of all runs. */
static inline size_t bench_run_index(const bench_config *cfg, size_t r, size_t e, size_t w)
{
    return (r * cfg->nengines + e) * cfg->nworkloads + w;
}

#endif
