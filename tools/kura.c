/*
 * kura.c - This file contains the `kura` command: DynamoDB operations on a database
 * directory through the JSON API (kura_execute), for scripts, the scenario vectors and the
 * differential test.
 *
 *   kura --data DIR [--partitions N] [--relaxed] exec OPERATION
 *       Reads one request body (DynamoDB JSON) from stdin, writes the response body and a
 *       newline to stdout. Exit status 0 on success, 1 on a DynamoDB error (the error body
 *       {"__type": ..., "message": ...} is on stdout), 2 on a usage error (message on
 *       stderr), 3 when the database cannot be opened or closed cleanly.
 *
 *   kura --data DIR [--partitions N] [--relaxed] pipe
 *       Reads lines "<Operation> <json>" from stdin and answers each with one line
 *       "<0|1> <response json>" (0: success, 1: DynamoDB error), flushed at once, so one
 *       process can run thousands of operations. The database is opened once.
 *
 *   kura --data DIR index-stats [TABLE [INDEX]]
 *       Prints the lag of every secondary index (of TABLE; INDEX only), the JSON of
 *       kura-server's GET /kura/indexes (server/index_admin.h).
 *
 *   kura --data DIR index-wait TABLE [INDEX] [TIMEOUT_MS]
 *       Waits until INDEX (every index of TABLE when INDEX is absent, "" or "-") has applied
 *       every write committed before the call, at most TIMEOUT_MS (default 10000); prints {}.
 *
 *   kura --data DIR rebuild-index TABLE INDEX
 *       Rebuilds INDEX (an LSI or a GSI) of TABLE from the table's items (kura_rebuild_index;
 *       online in a server, here the database is this process's) and prints {} once the
 *       rebuilt index has replaced the old one. An index damaged by a crash that an earlier
 *       kura recovered is then whole again (docs/architecture.md, "Rebuilding an index").
 *   kura --data DIR check [TABLE]
 *       Checks the database (or TABLE) as kura_check does (include/kura.h; README, "When in
 *       doubt: kura check"): every file's checksums and structure, every secondary index
 *       against its table at one snapshot, item collections, change stream positions. Prints
 *       every problem as one line (notes as "note: ..."), then a summary line. Exit status 0
 *       when nothing is wrong, 1 when problems were found, 3 when the database cannot be
 *       opened (an open refused for corruption is a finding too: its message, with the file
 *       and the offset, is printed) or checked, 2 on a usage error.
 *
 *   kura --data DIR ttl-sweep
 *       Runs one Time to Live sweep now (kura_ttl_sweep: deletes the expired items of every
 *       table with TTL enabled, which kura-server's sweeper thread does periodically) and
 *       prints {"Deleted":N}. UpdateTimeToLive and DescribeTimeToLive are DynamoDB
 *       operations of exec and pipe.
 *
 *   kura --data DIR streams list [TABLE]
 *   kura --data DIR streams read TABLE|STREAM_ARN [--shard SHARD_ID [--after SEQUENCE_NUMBER]]
 *       The change streams (of TABLE) as JSON lines, and every record kept of a stream (a
 *       table's latest one) as JSON lines, GetRecords' records exactly; --shard and --after
 *       go on from a record read before (tools/kura_streams.c). ListStreams, DescribeStream,
 *       GetShardIterator and GetRecords are also operations of exec and pipe.
 *
 *   kura --data DIR sql ["STATEMENT"]
 *       Runs a PartiQL statement (DynamoDB's dialect: docs/partiql.md), or every statement
 *       read from stdin (one per line, or ';'-separated), and prints the result items as JSON
 *       lines (DynamoDB JSON); errors go to stderr as "<ErrorType>: <message>" and make the
 *       exit status 1 (tools/kura_sql.c).
 *
 *   kura heat --server URL | DIR [--window N] [--table T] [--json] [--png FILE]
 *       The heat report (hot keys against the per-key limits, throttling, verdicts) of a
 *       running kura-server or of a database directory, as text, JSON or a PNG
 *       (tools/kura_heat.c; takes no --data).
 *
 * index-stats, index-wait, rebuild-index and check also exist as pseudo-operations of exec
 * and pipe, outside DynamoDB's names: KuraIndexWait {"TableName","IndexName"?,"TimeoutMillis"?}
 * (the differential test makes GSIs catch up between its writes and reads with it),
 * KuraIndexStats {"TableName"?,"IndexName"?}, KuraRebuildIndex {"TableName","IndexName"} and
 * KuraCheck {"TableName"?} (the JSON of kura-server's POST /kura/check, server/check_admin.h:
 * a check that ran is a success, whatever it found). index-stats, index-wait and
 * rebuild-index exit as exec does.
 *
 * --partitions sets the hash partitions of tables created without KuraPartitions;
 * --relaxed syncs the WAL periodically instead of on every write (KURA_RELAXED).
 * --region REGION and --account-id ACCOUNT (before the command, as the others) set the region
 * and account of every ARN and awsRegion answered (kura_options.region, account_id; default
 * us-east-1 and 000000000000), and which ARNs name this database's resources.
 * --throttle enforces DynamoDB's capacity limits (kura_options.throttle) on the requests of
 * exec and pipe, as kura-server --throttle does: a pipe of PutItems on one key past 1,000
 * WCU a second answers ThrottlingException.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kura.h"
#include "server/check_admin.h"
#include "server/index_admin.h"
#include "tools/kura_heat.h"
#include "tools/kura_sql.h"
#include "tools/kura_streams.h"

#define EXIT_USAGE 2
#define EXIT_DB 3

static void usage(void)
{
    fprintf(stderr,
            "usage: kura --data DIR [--partitions N] [--relaxed] [--region REGION]\n"
            "                       [--account-id ACCOUNT] [--throttle] COMMAND ... (below)\n"
            "       kura --data DIR [--partitions N] [--relaxed] exec OPERATION\n"
            "       kura --data DIR [--partitions N] [--relaxed] pipe\n"
            "       kura --data DIR index-stats [TABLE [INDEX]]\n"
            "       kura --data DIR index-wait TABLE [INDEX|-] [TIMEOUT_MS]\n"
            "       kura --data DIR rebuild-index TABLE INDEX\n"
            "       kura --data DIR check [TABLE]\n"
            "       kura --data DIR ttl-sweep\n"
            "       kura --data DIR sql [\"STATEMENT\"]\n"
            "       kura --data DIR streams list [TABLE]\n"
            "       kura --data DIR streams read TABLE|STREAM_ARN [--shard SHARD_ID\n"
            "                                     [--after SEQUENCE_NUMBER]]\n"
            "       kura heat --server URL | DIR [--window N] [--table T] [--json]\n"
            "                                    [--png FILE]\n"
            "exec reads the request (DynamoDB JSON) from stdin; pipe reads lines\n"
            "\"<Operation> <json>\" and answers \"<0|1> <json>\" per line. Besides DynamoDB's\n"
            "operations both take KuraIndexWait {\"TableName\",\"IndexName\"?,\"TimeoutMillis\"?}\n"
            "(wait until the table's indexes have applied every earlier write),\n"
            "KuraIndexStats {\"TableName\"?,\"IndexName\"?} (every index's lag) and\n"
            "KuraRebuildIndex {\"TableName\",\"IndexName\"} (as rebuild-index: rebuild the index\n"
            "from its table's items; {} once the rebuilt index has replaced it).\n"
            "KuraCheck {\"TableName\"?} (the integrity check, as JSON).\n"
            "check verifies every file, every index against its table, item collections and\n"
            "stream positions; it prints each problem, then a summary; exit 0 clean, 1\n"
            "problems found, 3 the database cannot be opened or checked.\n"
            "streams list prints the change streams (of TABLE) as JSON lines; streams read\n"
            "prints every record kept of a stream (a table's latest), GetRecords' records as\n"
            "JSON lines, shard by shard; --shard reads one shard, --after only its records\n"
            "after SEQUENCE_NUMBER.\n"
            "sql runs a PartiQL statement (or the statements on stdin, one per line or\n"
            "';'-separated) and prints the result items as JSON lines.\n");
    exit(EXIT_USAGE);
}

/* The answer of one request: from kura_execute() (freed with kura_free) or from a
 * pseudo-operation (index_admin.h, freed with free). */
typedef struct answer {
    char *out;
    bool ext;
} answer;

static void answer_free(answer *a)
{
    if (a->ext)
        free(a->out);
    else
        kura_free(a->out);
    a->out = NULL;
}

/* 0 (success), 1 (error, with its body) or -1 (out of memory, no body) from a pseudo-op. */
static int ext_result(kura_status s, ixadm_reply *rep, answer *a)
{
    a->out = rep->body;
    a->ext = true;
    if (!rep->body) return -1;
    return s == KURA_OK ? 0 : 1;
}

/* Reads all of stdin into a malloc'ed buffer. */
static char *read_stdin(size_t *len_out)
{
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += n;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    if (!buf || ferror(stdin)) {
        fprintf(stderr, "kura: cannot read the request from stdin\n");
        exit(EXIT_USAGE);
    }
    *len_out = len;
    return buf;
}

/* Runs one request, a DynamoDB operation or a pseudo-operation; returns 0 (success), 1
 * (error) or -1 (out of memory). */
static int run_one(kura_db *db, const char *op, const char *body, size_t len, answer *a)
{
    ixadm_reply rep;
    if (strcmp(op, "KuraIndexWait") == 0)
        return ext_result(ixadm_wait_json(db, body, len, &rep), &rep, a);
    if (strcmp(op, "KuraIndexStats") == 0)
        return ext_result(ixadm_stats_json(db, body, len, &rep), &rep, a);
    if (strcmp(op, "KuraRebuildIndex") == 0)
        return ext_result(ixadm_rebuild_json(db, body, len, &rep), &rep, a);
    if (strcmp(op, "KuraCheck") == 0)
        return ext_result(chkadm_json(db, body, len, &rep), &rep, a);
    size_t out_len;
    a->ext = false;
    kura_status s = kura_execute(db, op, body, len, &a->out, &out_len);
    if (s == KURA_E_NOMEM && !kura_execute_error_type()) return -1;
    return s == KURA_OK ? 0 : 1;
}

/* Prints an answer as exec does; returns the exit status. */
static int print_answer(int rc, answer *a)
{
    if (rc < 0) {
        fprintf(stderr, "kura: out of memory\n");
        return EXIT_DB;
    }
    printf("%s\n", a->out);
    answer_free(a);
    return rc;
}

static int cmd_exec(kura_db *db, const char *op)
{
    size_t len;
    char *body = read_stdin(&len);
    answer a = {NULL, false};
    int rc = run_one(db, op, body, len, &a);
    free(body);
    return print_answer(rc, &a);
}

static int cmd_index_stats(kura_db *db, const char *table, const char *index)
{
    ixadm_reply rep;
    answer a;
    int rc = ext_result(ixadm_stats(db, table, index, &rep), &rep, &a);
    return print_answer(rc, &a);
}

static int cmd_index_wait(kura_db *db, const char *table, const char *index, uint64_t timeout_ms)
{
    ixadm_reply rep;
    answer a;
    if (index && (!*index || strcmp(index, "-") == 0)) index = NULL;
    int rc = ext_result(ixadm_wait(db, table, index, timeout_ms, &rep), &rep, &a);
    return print_answer(rc, &a);
}

static int cmd_rebuild_index(kura_db *db, const char *table, const char *index)
{
    ixadm_reply rep;
    answer a;
    int rc = ext_result(ixadm_rebuild(db, table, index, &rep), &rep, &a);
    return print_answer(rc, &a);
}

static int cmd_ttl_sweep(kura_db *db)
{
    uint64_t n;
    kura_status s = kura_ttl_sweep(db, &n);
    if (s != KURA_OK) {
        fprintf(stderr, "kura: ttl-sweep: %s: %s\n", kura_status_str(s), kura_last_error());
        return EXIT_DB;
    }
    printf("{\"Deleted\":%llu}\n", (unsigned long long)n);
    return 0;
}

static void check_line(void *arg, kura_check_severity sev, const char *line)
{
    (void)arg;
    printf("%s%s\n", sev == KURA_CHECK_NOTE ? "note: " : "", line);
}

static int cmd_check(kura_db *db, const char *table)
{
    kura_check_summary m;
    kura_status s = kura_check(db, table, check_line, NULL, &m);
    if (s != KURA_OK) {
        fprintf(stderr, "kura: check: %s: %s\n", kura_status_str(s), kura_last_error());
        return EXIT_DB;
    }
    printf("kura check: %llu problem%s (%llu missing, %llu extra, %llu stale index entries), "
           "%llu note%s; checked %llu trees in %llu partitions: %llu manifests, %llu SSTables "
           "(%llu blocks, %llu entries), %llu WAL segments (%llu records); %llu tables (%llu "
           "items), %llu indexes (%llu entries; %llu not compared), %llu item collections, "
           "%llu streams (%llu shards)\n",
           (unsigned long long)m.problems, m.problems == 1 ? "" : "s",
           (unsigned long long)m.missing_entries, (unsigned long long)m.extra_entries,
           (unsigned long long)m.stale_entries, (unsigned long long)m.notes,
           m.notes == 1 ? "" : "s", (unsigned long long)m.trees,
           (unsigned long long)m.partitions, (unsigned long long)m.manifests,
           (unsigned long long)m.sstables, (unsigned long long)m.sstable_blocks,
           (unsigned long long)m.sstable_entries, (unsigned long long)m.wal_segments,
           (unsigned long long)m.wal_records, (unsigned long long)m.tables,
           (unsigned long long)m.items, (unsigned long long)m.indexes,
           (unsigned long long)m.index_entries, (unsigned long long)m.indexes_skipped,
           (unsigned long long)m.collections, (unsigned long long)m.streams,
           (unsigned long long)m.shards);
    return m.problems ? 1 : 0;
}

static int cmd_pipe(kura_db *db)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0) continue;
        char *sp = strchr(line, ' ');
        const char *body = sp ? sp + 1 : "";
        if (sp) *sp = '\0';
        answer a = {NULL, false};
        int rc = run_one(db, line, body, strlen(body), &a);
        if (rc < 0) {
            fprintf(stderr, "kura: out of memory\n");
            free(line);
            return EXIT_DB;
        }
        printf("%d %s\n", rc, a.out);
        fflush(stdout);
        answer_free(&a);
    }
    free(line);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "heat") == 0) /* its own arguments: kura_heat.c */
        return kura_heat_main(argc - 1, argv + 1);
    const char *dir = NULL;
    kura_options opts;
    kura_options_init(&opts);
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--partitions") == 0 && i + 1 < argc) {
            char *end;
            long p = strtol(argv[++i], &end, 10);
            if (*end || p < 1 || p > 256) {
                fprintf(stderr, "kura: --partitions takes 1..256\n");
                return EXIT_USAGE;
            }
            opts.default_partitions = (uint32_t)p;
        } else if (strcmp(argv[i], "--relaxed") == 0) {
            opts.durability = KURA_RELAXED;
        } else if (strcmp(argv[i], "--throttle") == 0) {
            opts.throttle = true;
        } else if (strcmp(argv[i], "--region") == 0 && i + 1 < argc) {
            opts.region = argv[++i]; /* checked by kura_open */
        } else if (strcmp(argv[i], "--account-id") == 0 && i + 1 < argc) {
            opts.account_id = argv[++i];
        } else {
            usage();
        }
    }
    int nargs = argc - i - 1; /* after the command */
    const char *cmd = i < argc ? argv[i] : "";
    bool exec = nargs == 1 && strcmp(cmd, "exec") == 0;
    bool pipe = nargs == 0 && strcmp(cmd, "pipe") == 0;
    bool stats = nargs <= 2 && strcmp(cmd, "index-stats") == 0;
    bool wait = nargs >= 1 && nargs <= 3 && strcmp(cmd, "index-wait") == 0;
    bool sweep = nargs == 0 && strcmp(cmd, "ttl-sweep") == 0;
    bool rebuild = nargs == 2 && strcmp(cmd, "rebuild-index") == 0;
    bool check = nargs <= 1 && strcmp(cmd, "check") == 0;
    bool streams = strcmp(cmd, "streams") == 0;
    bool sql = nargs <= 1 && strcmp(cmd, "sql") == 0;
    kura_streams_args sargs;
    if (streams && kura_streams_parse(nargs, argv + i + 1, &sargs) != 0) usage();
    if (!dir || (!exec && !pipe && !stats && !wait && !sweep && !streams && !rebuild && !check &&
                 !sql))
        usage();
    uint64_t timeout_ms = IXADM_DEFAULT_WAIT_MS;
    if (wait && nargs == 3) {
        char *end;
        unsigned long long t = strtoull(argv[i + 3], &end, 10);
        if (!*argv[i + 3] || *end || *argv[i + 3] == '-' || t > IXADM_MAX_WAIT_MS) {
            fprintf(stderr, "kura: TIMEOUT_MS takes 0..%u\n", IXADM_MAX_WAIT_MS);
            return EXIT_USAGE;
        }
        timeout_ms = t;
    }

    kura_db *db;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK) {
        fprintf(stderr, "kura: cannot open %s: %s: %s\n", dir, kura_status_str(s),
                kura_last_error());
        if (check) /* what stopped the open is the check's finding: on stdout too */
            printf("%s\nkura check: the database cannot be opened: %s\n", kura_last_error(),
                   kura_status_str(s));
        return EXIT_DB;
    }
    int rc = exec      ? cmd_exec(db, argv[i + 1])
             : pipe    ? cmd_pipe(db)
             : sweep   ? cmd_ttl_sweep(db)
             : rebuild ? cmd_rebuild_index(db, argv[i + 1], argv[i + 2])
             : streams ? kura_streams_run(db, &sargs)
             : sql     ? kura_sql_run(db, nargs > 0 ? argv[i + 1] : NULL)
             : check   ? cmd_check(db, nargs > 0 ? argv[i + 1] : NULL)
             : stats   ? cmd_index_stats(db, nargs > 0 ? argv[i + 1] : NULL,
                                         nargs > 1 ? argv[i + 2] : NULL)
                       : cmd_index_wait(db, argv[i + 1], nargs > 1 ? argv[i + 2] : NULL,
                                        timeout_ms);
    fflush(stdout);
    s = kura_close(db);
    if (s != KURA_OK) {
        fprintf(stderr, "kura: closing %s: %s: %s\n", dir, kura_status_str(s), kura_last_error());
        return EXIT_DB;
    }
    return rc;
}
