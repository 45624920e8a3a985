/*
 * main.c - kura-bench's command line: parses and checks the flags, runs the workloads
 * (runner.c), prints the tables and writes the JSON (report.c).
 *
 * Exit status: 0 when every run succeeded, 1 when some run failed (the report says which),
 * 2 for a bad command line (usage on stderr).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/engine.h"
#include "bench/keys.h"
#include "bench/report.h"
#include "bench/runner.h"
#include "bench/sys.h"
#include "bench/workloads.h"
#include "util/status.h"

#define DEFAULT_WORKLOADS                                                                      \
    "fillseq,fillrandom,overwrite,readrandom,readmissing,seekrandom,readseq,compact,fillsync," \
    "recover"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: kura-bench [--engines=LIST] [--workloads=LIST] [--num=N] [--key-size=B]\n"
            "                  [--value-size=B] [--threads=T] [--repeat=R] [--dir=DIR]\n"
            "                  [--json=FILE] [--sync-num=N] [--partitions=P]\n"
            "                  [--memtable-mb=M] [--cache-mb=C] [--seed=S] [--quiet]\n"
            "                  [--backfill-num=N] [--lag-gsis=G] [--lag-seconds=S]\n"
            "                  [--gsi-projection=all|keys] [--txn-seconds=S]\n\n"
            "Runs storage workloads against kura and its peers and reports ops/s, MB/s, p50\n"
            "and p99 latency, bytes on disk and peak RSS, as tables and as JSON.\n\n"
            "  --engines=LIST     comma-separated; 'all' = every key/value engine compiled in\n"
            "                     (default); 'items' = kura-raw,kura-capi,kura-json,\n"
            "                     kura-partiql,kura-json-partiql, the\n"
            "                     item-level ways into kura for putitem,getitem,query,updateitem;\n"
            "                     the index and transaction workloads run on kura-capi alone\n"
            "  --workloads=LIST   comma-separated, run in order (default: the storage-core\n"
            "                     workloads, fillseq through recover below)\n"
            "  --num=N            keys 0..N-1 and ops of fills/reads (default 1000000)\n"
            "  --key-size=B       key bytes: the index, zero-padded decimal (default 16)\n"
            "  --value-size=B     value bytes, ~50%% compressible (default 100)\n"
            "  --threads=T        threads of fillrandom, overwrite, readrandom, readmissing,\n"
            "                     seekrandom and fillsync; the others use 1 (default 1)\n"
            "  --repeat=R         runs of the whole list; the report gives medians (default 3)\n"
            "  --dir=DIR          where databases are made, as DIR/rR-ENGINE, each removed\n"
            "                     after its run (default ./kura-bench-data)\n"
            "  --json=FILE        also write the results as JSON to FILE\n"
            "  --sync-num=N       durable writes of fillsync, all threads (default 20000)\n"
            "  --partitions=P     kura: partitions of the tree (default 4)\n"
            "  --memtable-mb=M    memtable/write-buffer budget of each engine (default 64)\n"
            "  --cache-mb=C       block/page cache of each engine (default 32)\n"
            "  --seed=S           random seed; the same seed gives the same keys (default 301)\n"
            "  --backfill-num=N   backfill: items loaded before the GSI is created (default\n"
            "                     1000000)\n"
            "  --lag-gsis=G       gsi_lag: GSIs of its table, 1..5 (default 5)\n"
            "  --lag-seconds=S    gsi_lag: seconds of each open-loop phase (default 10)\n"
            "  --gsi-projection=P index workloads: the GSIs project 'all' attributes\n"
            "                     (default) or 'keys' (KEYS_ONLY)\n"
            "  --txn-seconds=S    transaction workloads: seconds of put_solo*, put_mixed* and\n"
            "                     txn_hot (default 5); pairs_* and *25_sync write --sync-num\n"
            "                     items, batch25 and txn25 --num (bench/txn/txn.h)\n"
            "  --quiet            no progress lines on stderr, except for runs that failed\n"
            "  --help             this text\n\n"
            "Workloads:\n");
    for (size_t i = 0; i < bench_nworkloads; i++)
        fprintf(out, "  %-12s %s\n", bench_workloads[i].name, bench_workloads[i].help);
    fprintf(out, "\nEngines: ");
    for (size_t i = 0; i < bench_engine_nnames; i++)
        fprintf(out, "%s%s%s", i ? ", " : "", bench_engine_names[i],
                bench_engine_find(bench_engine_names[i]) ? "" : " (not compiled in)");
    fprintf(out,
            "\n\nEvery (repeat, engine, workload) runs in its own process; fill workloads\n"
            "(except overwrite) and recover start on an empty database, the others use what\n"
            "the previous workload left. Fills write with the WAL on and no sync per write,\n"
            "fillsync syncs every write; each engine's exact settings are printed in the\n"
            "report and the JSON. Tables go to stdout; stderr gets a line per run: its\n"
            "round, the time elapsed and the time left (estimated from the runs so far),\n"
            "the engine, the workload and its figures.\n"
            "Exit status: 0 all runs succeeded, 1 some run failed, 2 bad command line.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "kura-bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n");
    usage(stderr);
    return 2;
}

/* Parses a decimal u64 in [lo, hi]. */
static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v_out)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *v_out = v;
    return true;
}

/* Splits a comma list into tokens of `copy` (modified in place). */
static size_t split_list(char *copy, char **tok, size_t cap)
{
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (n < cap + 1) /* one extra so the caller sees "too many" */
            tok[n++] = t;
    return n;
}

static int parse_engines(const char *arg, bench_config *cfg)
{
    char copy[512], *tok[BENCH_MAX_ENGINES + 1];
    /* "all" is every key/value engine; "items" the item-level pseudo-engines */
    bool all = strcmp(arg, "all") == 0, items = strcmp(arg, "items") == 0;
    if (all || items) {
        size_t len = 0;
        for (size_t k = 0; k < bench_engine_nnames; k++) {
            bool item_engine = strncmp(bench_engine_names[k], "kura-", 5) == 0;
            if (item_engine == items)
                len += (size_t)snprintf(copy + len, sizeof copy - len, "%s,",
                                        bench_engine_names[k]);
        }
        all = true; /* engines not compiled in are left out silently */
    } else if ((size_t)snprintf(copy, sizeof copy, "%s", arg) >= sizeof copy) {
        return bad_usage("--engines is too long: %s", arg);
    }
    size_t n = split_list(copy, tok, BENCH_MAX_ENGINES);
    cfg->nengines = 0;
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t k = 0; k < bench_engine_nnames; k++)
            known |= strcmp(tok[i], bench_engine_names[k]) == 0;
        if (!known)
            return bad_usage("unknown engine '%s'", tok[i]);
        const bench_engine *e = bench_engine_find(tok[i]);
        if (e == NULL && all)
            continue;
        if (e == NULL) {
            fprintf(stderr, "kura-bench: engine '%s' is not compiled into this kura-bench "
                            "(CMake did not find it). Compiled in:", tok[i]);
            for (size_t k = 0; k < bench_engine_nnames; k++)
                if (bench_engine_find(bench_engine_names[k]) != NULL)
                    fprintf(stderr, " %s", bench_engine_names[k]);
            fprintf(stderr, "\n");
            return 2;
        }
        for (size_t k = 0; k < cfg->nengines; k++)
            if (cfg->engines[k] == e)
                return bad_usage("engine '%s' is listed twice", tok[i]);
        cfg->engines[cfg->nengines++] = e;
    }
    if (cfg->nengines == 0)
        return bad_usage("no engine to run%s", all ? " (none is compiled in)" : "");
    return 0;
}

static int parse_workloads(const char *arg, bench_config *cfg)
{
    char copy[1024], *tok[BENCH_MAX_WORKLOADS + 1];
    if ((size_t)snprintf(copy, sizeof copy, "%s", arg) >= sizeof copy)
        return bad_usage("--workloads is too long: %s", arg);
    size_t n = split_list(copy, tok, BENCH_MAX_WORKLOADS);
    if (n > BENCH_MAX_WORKLOADS)
        return bad_usage("--workloads lists more than 32 workloads: %s", arg);
    if (n == 0)
        return bad_usage("--workloads is empty%s", "");
    for (size_t i = 0; i < n; i++) {
        const bench_workload *wl = bench_workload_find(tok[i]);
        if (wl == NULL)
            return bad_usage("unknown workload '%s'", tok[i]);
        cfg->workloads[i] = wl;
    }
    cfg->nworkloads = n;
    return 0;
}

enum { OPT_ENGINES = 256, OPT_WORKLOADS, OPT_DIR, OPT_JSON, OPT_QUIET, OPT_PROJECTION, OPT_HELP };

/* The numeric flags: option code, name, range, and where the value goes. */
typedef struct num_flag {
    int code;
    const char *name;
    uint64_t lo, hi;
    uint64_t value;
} num_flag;

static num_flag num_flags[] = {
    {'n', "num", 1, 1000000000000ull, 1000000},
    {'k', "key-size", 2, 1024, 16},
    {'v', "value-size", 1, 16u << 20, 100},
    {'t', "threads", 1, BENCH_MAX_THREADS, 1},
    {'r', "repeat", 1, 100, 3},
    {'s', "sync-num", 1, 1000000000ull, 20000},
    {'p', "partitions", 1, 256, 4},
    {'m', "memtable-mb", 1, 65536, 64},
    {'c', "cache-mb", 1, 65536, 32},
    {'S', "seed", 0, UINT64_MAX, 301},
    {'B', "backfill-num", 1, 1000000000ull, 1000000},
    {'G', "lag-gsis", 1, 5, 5},
    {'L', "lag-seconds", 1, 3600, 10},
    {'X', "txn-seconds", 1, 3600, 5},
};
#define NUM_FLAGS (sizeof num_flags / sizeof num_flags[0])

static uint64_t flag_value(int code)
{
    for (size_t i = 0; i < NUM_FLAGS; i++)
        if (num_flags[i].code == code)
            return num_flags[i].value;
    return 0;
}

/* Parses argv into cfg; returns 0, or the exit status (2 usage, -1 = --help done). */
static int parse_args(int argc, char **argv, bench_config *cfg)
{
    struct option opts[NUM_FLAGS + 8];
    size_t no = 0;
    for (size_t i = 0; i < NUM_FLAGS; i++)
        opts[no++] = (struct option){num_flags[i].name, required_argument, NULL, num_flags[i].code};
    opts[no++] = (struct option){"engines", required_argument, NULL, OPT_ENGINES};
    opts[no++] = (struct option){"workloads", required_argument, NULL, OPT_WORKLOADS};
    opts[no++] = (struct option){"dir", required_argument, NULL, OPT_DIR};
    opts[no++] = (struct option){"json", required_argument, NULL, OPT_JSON};
    opts[no++] = (struct option){"quiet", no_argument, NULL, OPT_QUIET};
    opts[no++] = (struct option){"gsi-projection", required_argument, NULL, OPT_PROJECTION};
    opts[no++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    opts[no] = (struct option){NULL, 0, NULL, 0};
    const char *engines = "all", *workloads = DEFAULT_WORKLOADS;
    cfg->dir = "kura-bench-data";
    opterr = 0;
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case OPT_ENGINES: engines = optarg; break;
        case OPT_WORKLOADS: workloads = optarg; break;
        case OPT_DIR: cfg->dir = optarg; break;
        case OPT_JSON: cfg->json_path = optarg; break;
        case OPT_QUIET: cfg->quiet = true; break;
        case OPT_PROJECTION:
            if (strcmp(optarg, "all") != 0 && strcmp(optarg, "keys") != 0)
                return bad_usage("--gsi-projection is 'all' or 'keys', not '%s'", optarg);
            cfg->gsi_keys_only = strcmp(optarg, "keys") == 0;
            break;
        case OPT_HELP: usage(stdout); return -1;
        case '?': return bad_usage("bad flag '%s'", argv[optind - 1]);
        default:
            for (size_t i = 0; i < NUM_FLAGS; i++)
                if (num_flags[i].code == c &&
                    !parse_u64(optarg, num_flags[i].lo, num_flags[i].hi, &num_flags[i].value))
                    rc = bad_usage("bad value for --%s", num_flags[i].name);
        }
    }
    if (rc != 0)
        return rc;
    if (optind < argc)
        return bad_usage("unexpected argument '%s'", argv[optind]);
    cfg->num = flag_value('n');
    cfg->key_size = (uint32_t)flag_value('k');
    cfg->value_size = (uint32_t)flag_value('v');
    cfg->threads = (uint32_t)flag_value('t');
    cfg->repeat = (uint32_t)flag_value('r');
    cfg->sync_num = flag_value('s');
    cfg->partitions = (uint32_t)flag_value('p');
    cfg->memtable_mb = (uint32_t)flag_value('m');
    cfg->cache_mb = (uint32_t)flag_value('c');
    cfg->seed = flag_value('S');
    cfg->backfill_num = flag_value('B');
    cfg->lag_gsis = (uint32_t)flag_value('G');
    cfg->lag_seconds = (uint32_t)flag_value('L');
    cfg->txn_seconds = (uint32_t)flag_value('X');
    if (!bench_key_fits(cfg->key_size, cfg->num))
        return bad_usage("--key-size is too small to hold the indexes below --num and the "
                         "missing keys (need one byte more than the digits)%s", "");
    if ((rc = parse_engines(engines, cfg)) != 0)
        return rc;
    return parse_workloads(workloads, cfg);
}

/* The command line as one string, for the report. Caller frees. */
static char *join_args(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len), *p = s;
    if (s == NULL)
        return NULL;
    for (int i = 0; i < argc; i++)
        p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
    *p = '\0';
    return s;
}

int main(int argc, char **argv)
{
    bench_config cfg;
    memset(&cfg, 0, sizeof cfg);
    int rc = parse_args(argc, argv, &cfg);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    bool dir_existed = access(cfg.dir, F_OK) == 0;
    if (bench_fs_mkdirs(cfg.dir) != KURA_OK) {
        fprintf(stderr, "kura-bench: %s\n", kura_last_error());
        return 1;
    }
    char *command = join_args(argc, argv);
    cfg.command = command ? command : "kura-bench";
    bench_machine m;
    bench_machine_probe(cfg.dir, &m);
    size_t nruns = cfg.repeat * cfg.nengines * cfg.nworkloads;
    bench_run *runs = calloc(nruns, sizeof *runs);
    if (runs == NULL) {
        fprintf(stderr, "kura-bench: out of memory\n");
        free(command);
        return 1;
    }
    bench_report_header(stdout, &cfg, &m);
    size_t failed = bench_runner_run(&cfg, runs);
    bench_report_table(stdout, &cfg, runs);
    rc = failed ? 1 : 0;
    if (cfg.json_path != NULL) {
        if (bench_report_json(cfg.json_path, &cfg, &m, runs) != KURA_OK) {
            fprintf(stderr, "kura-bench: %s\n", kura_last_error());
            rc = 1;
        } else {
            printf("JSON written to %s\n", cfg.json_path);
        }
    }
    if (failed)
        fprintf(stderr, "kura-bench: %zu run(s) failed\n", failed);
    if (!dir_existed)
        rmdir(cfg.dir); /* fails, as it should, if something else is in it */
    free(runs);
    free(command);
    return rc;
}
