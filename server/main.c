/*
 * main.c - This file contains kura-server's command line and lifecycle.
 *
 *   kura-server --data DIR | --in-memory  [--host 127.0.0.1] [--port 8000] [--sync|--relaxed]
 *               [--partitions N] [--threads N] [--auth ACCESS_KEY:SECRET] [--idle-ms N]
 *               [--gsi-read-wait[=MS]] [--item-collection-limit BYTES]
 *               [--ttl-sweep-ms MS] [--ttl-sweep-duty PCT] [--ttl-change-interval-ms MS]
 *               [--ttl-transition-ms MS]
 *               [--ttl-clock-offset SECONDS]
 *               [--stream-retention-ms MS] [--stream-iterator-ttl-ms MS]
 *               [--region REGION] [--account-id ACCOUNT] [--throttle]
 *
 * Lifecycle: SIGINT, SIGTERM and SIGHUP are blocked in every thread before any is created, then
 *   open the database -> start the HTTP daemon -> print "kura-server listening on
 *   http://HOST:PORT (data DIR)" (flushed: tests read the port from it) -> wait for a signal,
 *   giving memory back whenever the server goes idle (below) ->
 *   stop accepting, let requests in flight finish, stop the threads -> kura_close() ->
 *   remove the --in-memory directory -> exit 0.
 * Exit status: 0 after a clean shutdown, 1 when the database cannot be opened or closed
 * cleanly or the server cannot listen, 2 for a usage error.
 *
 * --threads defaults to one per core and one more; under --sync, writes run on
 * SRV_SYNC_WRITERS writer threads of their own (below, and http.c).
 * --in-memory is an ordinary database in a temporary directory removed at exit; since
 * nothing survives the process anyway it defaults to --relaxed durability (--sync still
 * applies if given).
 * --gsi-read-wait (off by default; MS defaults to IXADM_DEFAULT_WAIT_MS) makes every Query and
 * Scan of an index first wait for the index to apply the writes committed before it, so
 * tests against the server read their writes on a GSI (http.c, index_admin.h).
 * --item-collection-limit sets kura_options.item_collection_limit_bytes: the size past which
 * a write to an item collection of a table with an LSI is refused with
 * ItemCollectionSizeLimitExceededException (default DynamoDB's 10 GB; a few KB for tests).
 * The --ttl-* options set Time to Live's kura_options (docs/architecture.md, "Time to Live"):
 * the sweep interval, the share of its time a sweep works, the least time between two UpdateTimeToLive of a table (DynamoDB's
 * hour), how long ENABLING / DISABLING show; --ttl-clock-offset moves the clock TTL compares
 * expiry times with by that many seconds (it may be negative), so tests can expire items.
 * --stream-retention-ms and --stream-iterator-ttl-ms set the change streams' kura_options
 * (docs/architecture.md, "Change stream"): how long a stream's records stay readable
 * (DynamoDB's 24 hours by default) and how long a shard iterator does (DynamoDB's 15 minutes);
 * tests shorten them to reach TrimmedDataAccessException and ExpiredIteratorException.
 * --throttle sets kura_options.throttle: DynamoDB's capacity limits and throttling errors
 * (docs/architecture.md, "Capacity accounting and throttling on the item paths");
 * --capacity-accounting-off sets kura_options.capacity_accounting_off (benchmarks only).
 * --region and --account-id set kura_options.region and account_id: the region and account of
 * the ARNs (and awsRegion) answered to a request that is not signed; a signed request is
 * answered in the region of its credential scope (http.c), always with this account (kura
 * cannot tell an access key's account).
 */
#include <errno.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api/jdoc.h"
#include "server/index_admin.h"
#include "server/server.h"

#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define SHUTDOWN_GRACE_MS 10000

/* Serving threads: one per core and one more. A serving thread never waits on I/O but its
 * sockets' (durable writes go to the writers), so about one per core is enough, and fewer
 * threads make fewer context switches; the one more keeps a core busy while another serving
 * thread waits for its time slice behind a process sharing the machine (the load generator of
 * the benchmark). GetItem at 32 connections on the 2-core test machine, 8 alternating runs each
 * (docs/server.md): 2 threads median 72.0k req/s and p99 > 4 ms in 2 runs of 8; 3 threads
 * 76.6k, p99 <= 1.7 ms; 4 threads 69.7k. */
#define SRV_EXTRA_THREADS 1

/* Writer threads under --sync. A durable write waits on its writer for the WAL's group
 * commit, and every write waiting at the moment of a sync shares it: with 32 writers, 32
 * connections writing at once can share one fdatasync (PutItem --sync at 32 connections:
 * ~10k req/s with 8 threads holding writes, ~17-20k with 32). Idle writers only hold
 * virtual stack. */
#define SRV_SYNC_WRITERS 32

/* Idle: after --idle-ms (default IDLE_MS) without a request, when the process holds more
 * than IDLE_RSS_BYTES, kura_release_memory() flushes the memtables, unloads the SSTables'
 * indexes and filters, empties the block cache and trims the heap, once per idle period. An
 * endpoint left running in the background then costs about what it costs after start
 * (~7 MB) rather than its memtables, cache and indexes (60 MB after the benchmark's
 * workloads, whose 100 MB of data alone hold ~3.5 MB of indexes and filters); the next
 * requests read what they need back from the OS's page cache. Below the RSS threshold
 * nothing is done, so a trickle of small writes with pauses between them does not make a
 * tiny SSTable per pause. The main thread checks every IDLE_POLL_MS while it waits for the
 * shutdown signal. Tables a compaction is still using when the release runs keep their
 * indexes: then it runs again after another idle period, at most IDLE_RELEASES times. */
#define IDLE_MS 1000
#define IDLE_RSS_BYTES (8u << 20)
#define IDLE_POLL_MS 100
#define IDLE_RELEASES 5
/* glibc's malloc gives a thread that meets contention an arena of its own, up to 8 per core:
 * 16 on two cores, which the 32 writers of --sync all reach. Each arena keeps its own free
 * fragments between uses: after the benchmark's workloads (and with the SSTable indexes
 * unloaded) the idle --sync server held 15.9-16.3 MiB with 16 arenas, 9.8 with 4 and
 * 8.9-9.1 with 2; its PutItem at 32 connections ran as fast with 2 as with 4 (3 alternated
 * pairs, 22.0-23.7k req/s: the fdatasync bounds it). --relaxed idles at 8.5-9.0 MiB with 2
 * and 9.5-10.1 MiB with 4, above the 10 MB we hold it to; what 2 cost it is PutItem at 32
 * connections, where its serving threads contend with the flushes and compactions for the
 * arenas: median 52.5k against 58.7k req/s (5 alternated pairs, +-15% between runs). A fixed
 * 128 KB mmap threshold (no dynamic raise) cut the idle arenas further, 2.4-3.0 -> 1.5 MiB
 * with 4 arenas, but cost --relaxed PutItem ~10% (7 pairs). One arena per core. */
#define ARENAS_PER_CORE 1

typedef struct srv_options {
    const char *data;
    bool in_memory;
    int durability; /* -1: not given */
    uint32_t partitions;
    unsigned idle_ms; /* 0: never release memory when idle */
    uint64_t collection_limit; /* --item-collection-limit, 0: DynamoDB's 10 GB */
    unsigned ttl_sweep_ms, ttl_duty, ttl_change_ms, ttl_transition_ms; /* --ttl-*, 0: defaults */
    int64_t ttl_clock_offset; /* --ttl-clock-offset, seconds */
    uint64_t stream_retention_ms; /* --stream-retention-ms, 0: DynamoDB's 24 hours */
    unsigned stream_iterator_ttl_ms; /* --stream-iterator-ttl-ms, 0: DynamoDB's 15 minutes */
    char *auth_key, *auth_secret; /* --auth, malloc'ed */
    const char *region, *account_id; /* --region, --account-id (argv), NULL: the defaults */
    bool throttle;                   /* --throttle */
    bool accounting_off;             /* --capacity-accounting-off (measurement only) */
    srv_config cfg;
} srv_options;

static void usage(const char *msg)
{
    if (msg) fprintf(stderr, "kura-server: %s\n", msg);
    fprintf(stderr,
            "usage: kura-server --data DIR | --in-memory [--host 127.0.0.1] [--port 8000]\n"
            "                   [--sync | --relaxed] [--partitions N] [--threads N]\n"
            "                   [--auth ACCESS_KEY:SECRET] [--idle-ms N] [--gsi-read-wait[=MS]]\n"
            "                   [--item-collection-limit BYTES] [--ttl-sweep-ms MS]\n"
            "                   [--ttl-sweep-duty PCT]\n"
            "                   [--ttl-change-interval-ms MS] [--ttl-transition-ms MS]\n"
            "                   [--ttl-clock-offset SECONDS]\n"
            "                   [--stream-retention-ms MS] [--stream-iterator-ttl-ms MS]\n"
            "                   [--region REGION] [--account-id ACCOUNT] [--throttle]\n"
            "  --throttle            DynamoDB's capacity limits: PROVISIONED throughput with\n"
            "                        its burst, on-demand maxima and peaks, 3,000 RCU / 1,000\n"
            "                        WCU per partition-key value; throttled requests get\n"
            "                        DynamoDB's errors (off by default: any load is accepted)\n"
            "  --capacity-accounting-off  no capacity accounting (an empty GET /kura/heat):\n"
            "                        only to measure what the accounting costs\n"
            "  --gsi-read-wait[=MS]  a Query or Scan with IndexName first waits (at most MS,\n"
            "                        default %u) until the index has applied every write\n"
            "                        acknowledged before it: read-your-writes on GSIs for\n"
            "                        deterministic tests (off by default)\n"
            "  --item-collection-limit BYTES  the largest item collection (one partition key\n"
            "                        value with its LSI entries) of a table with an LSI;\n"
            "                        default 10 GB as DynamoDB\n"
            "  --ttl-sweep-ms MS     how often expired items are deleted (default 10000)\n"
            "  --ttl-sweep-duty PCT  the share of its time a sweep works (default 50)\n"
            "  --ttl-change-interval-ms MS  least time between two UpdateTimeToLive of a\n"
            "                        table (default one hour, as DynamoDB)\n"
            "  --ttl-transition-ms MS  how long DISABLING shows (default 1000)\n"
            "  --ttl-clock-offset SECONDS  moves TTL's clock (tests)\n"
            "  --stream-retention-ms MS  how long stream records stay readable (default\n"
            "                        24 hours, as DynamoDB)\n"
            "  --stream-iterator-ttl-ms MS  how long a shard iterator stays valid (default\n"
            "                        15 minutes, as DynamoDB)\n"
            "  --region REGION       the region of ARNs and awsRegion for unsigned requests\n"
            "                        (default " KURA_DEFAULT_REGION "); a signed request gets the\n"
            "                        region of its credential scope\n"
            "  --account-id ACCOUNT  the 12-digit account of every ARN (default\n"
            "                        " KURA_DEFAULT_ACCOUNT_ID ", DynamoDB Local's)\n"
            "  kura's own endpoints: GET /kura/indexes (every index's lag), POST\n"
            "  /kura/index-wait {\"TableName\",\"IndexName\"?,\"TimeoutMillis\"?}, GET\n"
            "  /kura/heat[?table=T&window=S] (capacity per key, throttling), POST\n"
            "  /kura/check {\"TableName\"?} (the integrity check) (docs/server.md)\n",
            IXADM_DEFAULT_WAIT_MS);
    exit(EXIT_USAGE);
}

static unsigned parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || *s == '-' || v < lo || v > hi) {
        fprintf(stderr, "kura-server: %s takes %u..%u, not '%s'\n", opt, lo, hi, s);
        exit(EXIT_USAGE);
    }
    return (unsigned)v;
}

static uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-' || v == 0 || errno) {
        fprintf(stderr, "kura-server: %s takes a positive number of bytes, not '%s'\n", opt, s);
        exit(EXIT_USAGE);
    }
    return (uint64_t)v;
}

/* A positive number of milliseconds of up to a year (--stream-retention-ms). */
static uint64_t parse_ms(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-' || v == 0 || v > 31536000000ull || errno) {
        fprintf(stderr, "kura-server: %s takes 1..31536000000 milliseconds, not '%s'\n", opt, s);
        exit(EXIT_USAGE);
    }
    return (uint64_t)v;
}

/* A whole number of seconds, possibly negative (--ttl-clock-offset). */
static int64_t parse_offset(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) {
        fprintf(stderr, "kura-server: %s takes a number of seconds, not '%s'\n", opt, s);
        exit(EXIT_USAGE);
    }
    return (int64_t)v;
}

/* A value of lo..hi characters of `allowed` (--region, --account-id). */
static const char *parse_chars(const char *opt, const char *s, const char *allowed, size_t lo,
                               size_t hi)
{
    size_t n = strlen(s);
    if (n < lo || n > hi || strspn(s, allowed) != n) {
        fprintf(stderr, "kura-server: %s takes %zu..%zu of [%s], not '%s'\n", opt, lo, hi,
                allowed, s);
        exit(EXIT_USAGE);
    }
    return s;
}

/* KEY:SECRET. The secret is copied and blanked in argv, so that ps and /proc/PID/cmdline
 * show "--auth KEY:xxxx" once the server runs. */
static void parse_auth(srv_options *o, char *arg)
{
    char *colon = strchr(arg, ':');
    if (!colon || colon == arg || !colon[1]) usage("--auth takes ACCESS_KEY:SECRET");
    o->auth_key = strndup(arg, (size_t)(colon - arg));
    o->auth_secret = strdup(colon + 1);
    if (!o->auth_key || !o->auth_secret) {
        fprintf(stderr, "kura-server: out of memory\n");
        exit(EXIT_FAIL);
    }
    memset(colon + 1, 'x', strlen(colon + 1));
    o->cfg.auth_key = o->auth_key;
    o->cfg.auth_secret = o->auth_secret;
}

static void parse_args(int argc, char **argv, srv_options *o, long cores)
{
    memset(o, 0, sizeof *o);
    o->durability = -1;
    o->cfg.host = "127.0.0.1";
    o->cfg.port = 8000;
    o->cfg.threads = (cores > 0 ? (unsigned)cores : 1) + SRV_EXTRA_THREADS;
    o->cfg.max_connections = 1024;
    o->cfg.timeout_s = 60;
    o->idle_ms = IDLE_MS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) usage(NULL);
        if (strcmp(a, "--in-memory") == 0) {
            o->in_memory = true;
            continue;
        }
        if (strcmp(a, "--gsi-read-wait") == 0) {
            o->cfg.gsi_read_wait_ms = IXADM_DEFAULT_WAIT_MS;
            continue;
        }
        if (strncmp(a, "--gsi-read-wait=", 16) == 0) {
            o->cfg.gsi_read_wait_ms = parse_uint("--gsi-read-wait", a + 16, 1, IXADM_MAX_WAIT_MS);
            continue;
        }
        if (strcmp(a, "--throttle") == 0) {
            o->throttle = true;
            continue;
        }
        if (strcmp(a, "--capacity-accounting-off") == 0) {
            o->accounting_off = true;
            continue;
        }
        if (strcmp(a, "--sync") == 0 || strcmp(a, "--relaxed") == 0) {
            int d = strcmp(a, "--sync") == 0 ? KURA_SYNC : KURA_RELAXED;
            if (o->durability >= 0 && o->durability != d)
                usage("--sync and --relaxed exclude each other");
            o->durability = d;
            continue;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "kura-server: unknown option or missing value: %s\n", a);
            usage(NULL);
        }
        char *v = argv[++i];
        if (strcmp(a, "--data") == 0)
            o->data = v;
        else if (strcmp(a, "--host") == 0)
            o->cfg.host = v;
        else if (strcmp(a, "--port") == 0)
            o->cfg.port = parse_uint(a, v, 0, 65535);
        else if (strcmp(a, "--partitions") == 0)
            o->partitions = parse_uint(a, v, 1, 256);
        else if (strcmp(a, "--threads") == 0)
            o->cfg.threads = parse_uint(a, v, 1, 1024);
        else if (strcmp(a, "--auth") == 0)
            parse_auth(o, v);
        else if (strcmp(a, "--idle-ms") == 0)
            o->idle_ms = parse_uint(a, v, 0, 86400000);
        else if (strcmp(a, "--item-collection-limit") == 0)
            o->collection_limit = parse_u64(a, v);
        else if (strcmp(a, "--ttl-sweep-ms") == 0)
            o->ttl_sweep_ms = parse_uint(a, v, 1, 86400000);
        else if (strcmp(a, "--ttl-sweep-duty") == 0)
            o->ttl_duty = parse_uint(a, v, 1, 100);
        else if (strcmp(a, "--ttl-change-interval-ms") == 0)
            o->ttl_change_ms = parse_uint(a, v, 1, 86400000);
        else if (strcmp(a, "--ttl-transition-ms") == 0)
            o->ttl_transition_ms = parse_uint(a, v, 1, 86400000);
        else if (strcmp(a, "--ttl-clock-offset") == 0)
            o->ttl_clock_offset = parse_offset(a, v);
        else if (strcmp(a, "--stream-retention-ms") == 0)
            o->stream_retention_ms = parse_ms(a, v);
        else if (strcmp(a, "--stream-iterator-ttl-ms") == 0)
            o->stream_iterator_ttl_ms = parse_uint(a, v, 1, 86400000);
        else if (strcmp(a, "--region") == 0)
            o->region = parse_chars(a, v, "abcdefghijklmnopqrstuvwxyz0123456789-", 1, 32);
        else if (strcmp(a, "--account-id") == 0)
            o->account_id = parse_chars(a, v, "0123456789", 12, 12);
        else {
            fprintf(stderr, "kura-server: unknown option: %s\n", a);
            usage(NULL);
        }
    }
    if (!o->data == !o->in_memory) usage("give exactly one of --data DIR and --in-memory");
}

/* --ttl-clock-offset: the real time moved by the offset. */
static int64_t offset_clock(void *arg)
{
    return (int64_t)time(NULL) + *(const int64_t *)arg;
}

static kura_status open_db(srv_options *o, const char *dir, kura_db **db_out)
{
    kura_options opts;
    kura_options_init(&opts);
    if (o->durability >= 0)
        opts.durability = (kura_durability)o->durability;
    else if (o->in_memory)
        opts.durability = KURA_RELAXED;
    o->cfg.sync_writers = opts.durability == KURA_SYNC ? SRV_SYNC_WRITERS : 0;
    if (o->partitions) opts.default_partitions = o->partitions;
    opts.item_collection_limit_bytes = o->collection_limit;
    opts.ttl_sweep_interval_ms = o->ttl_sweep_ms;
    opts.ttl_sweep_duty_percent = o->ttl_duty;
    opts.ttl_change_interval_ms = o->ttl_change_ms;
    opts.ttl_transition_ms = o->ttl_transition_ms;
    opts.stream_retention_ms = o->stream_retention_ms;
    opts.stream_iterator_ttl_ms = o->stream_iterator_ttl_ms;
    if (o->region) opts.region = o->region;
    if (o->account_id) opts.account_id = o->account_id;
    opts.throttle = o->throttle;
    opts.capacity_accounting_off = o->accounting_off;
    if (o->ttl_clock_offset) {
        opts.ttl_clock = offset_clock;
        opts.ttl_clock_arg = &o->ttl_clock_offset;
    }
    return kura_open(dir, &opts, db_out);
}

/* Blocks SIGINT/SIGTERM (and SIGHUP: a closed terminal shuts down as cleanly, removing the
 * --in-memory directory) in this thread and every thread started after; SIGPIPE ignored (a
 * client that goes away must not kill the server). */
static void block_signals(sigset_t *set)
{
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* Raises the soft limit of open files toward the hard one, so that max_connections sockets
 * plus the database's files fit (the usual soft default is 1024). */
static void raise_fd_limit(unsigned connections)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)connections + 512;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* Resident bytes of this process, 0 if unknown. */
static size_t rss_bytes(void)
{
    unsigned long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    int n = fscanf(f, "%lu %lu", &pages, &resident);
    fclose(f);
    return n == 2 ? resident * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

/* One release of an idle period (see IDLE_MS); true if it is worth another one: some
 * SSTables were in use and kept their indexes. */
static bool release_when_idle(kura_db *db)
{
    if (rss_bytes() <= IDLE_RSS_BYTES) return false;
    jd_free_spares(); /* before the release, whose malloc_trim then returns their pages */
    if (kura_release_memory(db) != KURA_OK) {
        fprintf(stderr, "kura-server: releasing memory while idle: %s\n", kura_last_error());
        return false;
    }
    kura_stats st;
    kura_get_stats(db, &st);
    return st.table_index_bytes > 0;
}

/* Waits for SIGINT, SIGTERM or SIGHUP; meanwhile, with idle_ms > 0, releases memory when
 * idle (see IDLE_MS). A database restarted with replayed memtables counts as having
 * something to release. */
static void wait_for_signal(const sigset_t *sigs, srv_http *h, kura_db *db, unsigned idle_ms)
{
    const struct timespec tick = {0, IDLE_POLL_MS * 1000000L};
    uint64_t seen = 0;
    unsigned quiet_ms = 0, releases = 0; /* releases == IDLE_RELEASES: done for this period */
    for (;;) {
        int sig = idle_ms ? sigtimedwait(sigs, NULL, &tick) : sigwaitinfo(sigs, NULL);
        if (sig > 0) return;
        if (sig < 0 && errno != EAGAIN && errno != EINTR) {
            fprintf(stderr, "kura-server: waiting for signals: %s\n", strerror(errno));
            return;
        }
        if (!idle_ms) continue;
        uint64_t started;
        if (srv_http_activity(h, &started) || started != seen) {
            seen = started;
            quiet_ms = 0;
            releases = 0;
            continue;
        }
        if (releases == IDLE_RELEASES || (quiet_ms += IDLE_POLL_MS) < idle_ms) continue;
        quiet_ms = 0;
        releases = release_when_idle(db) ? releases + 1 : IDLE_RELEASES;
    }
}

int main(int argc, char **argv)
{
    srv_options o;
    sigset_t sigs;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __GLIBC__
    mallopt(M_ARENA_MAX, (int)(cores > 2 ? cores : 2) * ARENAS_PER_CORE); /* before any thread */
#endif
    parse_args(argc, argv, &o, cores);
    block_signals(&sigs);
    raise_fd_limit(o.cfg.max_connections);

    char *tmp = NULL;
    const char *dir = o.data;
    kura_status s = KURA_OK;
    if (o.in_memory && (s = srv_tmpdir_create(&tmp)) != KURA_OK) {
        fprintf(stderr, "kura-server: %s\n", kura_last_error());
        return EXIT_FAIL;
    }
    if (tmp) dir = tmp;
    kura_db *db = NULL;
    srv_http *h = NULL;
    int rc = EXIT_FAIL;
    if ((s = open_db(&o, dir, &db)) != KURA_OK) {
        fprintf(stderr, "kura-server: cannot open the database in %s: %s\n", dir,
                kura_last_error());
        goto out;
    }
    if ((s = srv_http_start(db, &o.cfg, &h)) != KURA_OK) {
        fprintf(stderr, "kura-server: %s\n", kura_last_error());
        goto out;
    }
    bool v6 = strchr(o.cfg.host, ':') != NULL;
    printf("kura-server listening on http://%s%s%s:%u (data %s)\n", v6 ? "[" : "", o.cfg.host,
           v6 ? "]" : "", (unsigned)srv_http_port(h), dir);
    fflush(stdout);

    wait_for_signal(&sigs, h, db, o.idle_ms);
    srv_http_stop(h, SHUTDOWN_GRACE_MS);
    h = NULL;
    rc = 0;
out:
    srv_http_stop(h, 0);
    if (db && (s = kura_close(db)) != KURA_OK) {
        fprintf(stderr, "kura-server: closing the database: %s\n", kura_last_error());
        rc = EXIT_FAIL;
    }
    if (tmp && srv_tmpdir_remove(tmp) != KURA_OK)
        fprintf(stderr, "kura-server: cannot remove %s: %s\n", tmp, kura_last_error());
    free(tmp);
    if (o.auth_secret) OPENSSL_cleanse(o.auth_secret, strlen(o.auth_secret));
    free(o.auth_key);
    free(o.auth_secret);
    return rc;
}
