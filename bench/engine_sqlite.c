/*
 * engine_sqlite.c - the SQLite adapter of kura-bench (sqlite3.h).
 *
 * The database is DIR/kv.db with one table, `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`
 * (a B-tree keyed by k, memcmp order), in WAL journal mode. Every put is one autocommit
 * `INSERT OR REPLACE` through a prepared statement, so one transaction per write, like the
 * other engines' single puts. synchronous=NORMAL for the fills (the WAL is written at every
 * commit but synced only at checkpoints: SQLite's "WAL on, no fsync per write") and
 * synchronous=FULL for fillsync (every commit synced).
 *
 * Each bench session is its own connection (opened SQLITE_OPEN_NOMUTEX: one thread at a
 * time) with its own prepared statements: that is how SQLite serves several threads, readers
 * in parallel and writers one at a time on the WAL write lock (busy_timeout makes them wait
 * rather than fail). A connection's page cache is private, so --cache-mb is split over the
 * connections that run at once. The bench_db keeps one more connection for setup and for
 * `compact` (VACUUM, then a truncating checkpoint).
 */
#include "bench/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "util/status.h"

#define SQ_PAGE_BYTES 4096 /* SQLite's default page size */
#define SQ_BUSY_TIMEOUT_MS 60000

typedef struct sq_db {
    char path[4096];
    sqlite3 *conn; /* setup and compaction */
    bench_engine_opts opts;
} sq_db;

typedef struct sq_sess {
    sq_db *db;
    sqlite3 *conn;
    sqlite3_stmt *put, *get;
} sq_sess;

typedef struct sq_it {
    sqlite3_stmt *from; /* SELECT ... WHERE k >= ?1 */
    sqlite3_stmt *all;  /* SELECT ... from the first key */
    sqlite3_stmt *cur;  /* the one being stepped, or NULL */
    bool valid;
} sq_it;

static kura_status sq_error(sqlite3 *conn, int rc, const char *what)
{
    kura_status s = rc == SQLITE_FULL ? KURA_E_NOSPC : rc == SQLITE_NOMEM ? KURA_E_NOMEM
                                                                          : KURA_E_IO;
    return kura_err(s, "sqlite %s: %s (%s)", what, conn ? sqlite3_errmsg(conn) : "",
                    sqlite3_errstr(rc));
}

/* Page cache per connection in KiB: the budget over the connections that run at once. */
static long long sq_cache_kib(const bench_engine_opts *o)
{
    uint64_t per_conn = o->cache_bytes / (o->threads ? o->threads : 1);
    return (long long)(per_conn >> 10);
}

static void sq_settings(const bench_engine_opts *o, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "SQLite %s; table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID; "
             "journal_mode=WAL; page_size %d; cache_size %llu MiB split over the "
             "connections (one connection and prepared statements per thread); one "
             "autocommit INSERT OR REPLACE per put; fills: synchronous=NORMAL; fillsync: "
             "synchronous=FULL; compact: VACUUM + wal_checkpoint(TRUNCATE); recover: the "
             "writer sets wal_autocheckpoint to %llu pages so the WAL keeps every write",
             sqlite3_libversion(), SQ_PAGE_BYTES, (unsigned long long)(o->cache_bytes >> 20),
             (unsigned long long)(BENCH_RECOVER_MEMTABLE_BYTES / SQ_PAGE_BYTES));
}

static kura_status sq_exec(sqlite3 *conn, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(conn, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return KURA_OK;
    kura_status s = kura_err(rc == SQLITE_FULL ? KURA_E_NOSPC : KURA_E_IO, "sqlite \"%s\": %s",
                             sql, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return s;
}

/* Opens a connection with the per-connection settings. */
static kura_status sq_connect(const sq_db *d, sqlite3 **conn_out)
{
    sqlite3 *conn = NULL;
    int rc = sqlite3_open_v2(d->path, &conn,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        kura_status s = sq_error(conn, rc, "open");
        sqlite3_close(conn);
        return s;
    }
    sqlite3_busy_timeout(conn, SQ_BUSY_TIMEOUT_MS);
    char sql[256];
    int n = snprintf(sql, sizeof sql, "PRAGMA synchronous=%s; PRAGMA cache_size=-%lld;",
                     d->opts.sync_writes ? "FULL" : "NORMAL", sq_cache_kib(&d->opts));
    if (d->opts.hold_writes_in_wal)
        snprintf(sql + n, sizeof sql - (size_t)n, "PRAGMA wal_autocheckpoint=%llu;",
                 (unsigned long long)(BENCH_RECOVER_MEMTABLE_BYTES / SQ_PAGE_BYTES));
    kura_status s = sq_exec(conn, sql);
    if (s != KURA_OK) {
        sqlite3_close(conn);
        return s;
    }
    *conn_out = conn;
    return KURA_OK;
}

static kura_status sq_open(const char *dir, const bench_engine_opts *o, bench_db **db_out)
{
    sq_db *d = calloc(1, sizeof *d);
    if (d == NULL)
        return kura_err(KURA_E_NOMEM, "sqlite adapter");
    d->opts = *o;
    if ((size_t)snprintf(d->path, sizeof d->path, "%s/kv.db", dir) >= sizeof d->path) {
        free(d);
        return kura_err(KURA_E_INVALID, "sqlite: path too long: %s", dir);
    }
    kura_status s = sq_connect(d, &d->conn);
    if (s == KURA_OK)
        s = sq_exec(d->conn, "PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS "
                             "kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID;");
    if (s != KURA_OK) {
        sqlite3_close(d->conn);
        free(d);
        return s;
    }
    *db_out = (bench_db *)d;
    return KURA_OK;
}

static kura_status sq_close(bench_db *db)
{
    sq_db *d = (sq_db *)db;
    int rc = sqlite3_close(d->conn); /* the last connection checkpoints the WAL */
    kura_status s = rc == SQLITE_OK ? KURA_OK : sq_error(NULL, rc, "close");
    free(d);
    return s;
}

static kura_status sq_prepare(sqlite3 *conn, const char *sql, sqlite3_stmt **stmt_out)
{
    int rc = sqlite3_prepare_v2(conn, sql, -1, stmt_out, NULL);
    return rc == SQLITE_OK ? KURA_OK : sq_error(conn, rc, "prepare");
}

static void sq_sess_close(bench_sess *bs)
{
    sq_sess *s = (sq_sess *)bs;
    if (s == NULL)
        return;
    sqlite3_finalize(s->put);
    sqlite3_finalize(s->get);
    sqlite3_close(s->conn);
    free(s);
}

static kura_status sq_sess_open(bench_db *db, bench_sess **sess_out)
{
    sq_sess *s = calloc(1, sizeof *s);
    if (s == NULL)
        return kura_err(KURA_E_NOMEM, "sqlite session");
    s->db = (sq_db *)db;
    kura_status st = sq_connect(s->db, &s->conn);
    if (st == KURA_OK)
        st = sq_prepare(s->conn, "INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)", &s->put);
    if (st == KURA_OK)
        st = sq_prepare(s->conn, "SELECT v FROM kv WHERE k = ?1", &s->get);
    if (st != KURA_OK) {
        sq_sess_close((bench_sess *)s);
        return st;
    }
    *sess_out = (bench_sess *)s;
    return KURA_OK;
}

static kura_status sq_put(bench_sess *bs, const void *key, size_t klen, const void *val,
                          size_t vlen)
{
    sq_sess *s = (sq_sess *)bs;
    sqlite3_bind_blob(s->put, 1, key, (int)klen, SQLITE_STATIC);
    sqlite3_bind_blob(s->put, 2, val, (int)vlen, SQLITE_STATIC);
    int rc = sqlite3_step(s->put);
    sqlite3_reset(s->put);
    return rc == SQLITE_DONE ? KURA_OK : sq_error(s->conn, rc, "put");
}

static kura_status sq_get(bench_sess *bs, const void *key, size_t klen, kbuf *val,
                          bool *found_out)
{
    sq_sess *s = (sq_sess *)bs;
    sqlite3_bind_blob(s->get, 1, key, (int)klen, SQLITE_STATIC);
    int rc = sqlite3_step(s->get);
    kura_status st = KURA_OK;
    if (rc == SQLITE_ROW) {
        const void *v = sqlite3_column_blob(s->get, 0);
        size_t vlen = (size_t)sqlite3_column_bytes(s->get, 0);
        val->len = 0;
        if (!kbuf_append(val, v, vlen))
            st = kura_err(KURA_E_NOMEM, "sqlite get: value of %zu bytes", vlen);
    } else if (rc != SQLITE_DONE) {
        st = sq_error(s->conn, rc, "get");
    }
    sqlite3_reset(s->get); /* ends the read transaction */
    if (st == KURA_OK)
        *found_out = rc == SQLITE_ROW;
    return st;
}

static void sq_iter_close(bench_it *bit)
{
    sq_it *it = (sq_it *)bit;
    if (it == NULL)
        return;
    sqlite3_finalize(it->from);
    sqlite3_finalize(it->all);
    free(it);
}

static kura_status sq_iter_open(bench_sess *bs, bench_it **it_out)
{
    sq_sess *s = (sq_sess *)bs;
    sq_it *it = calloc(1, sizeof *it);
    if (it == NULL)
        return kura_err(KURA_E_NOMEM, "sqlite iterator");
    kura_status st =
        sq_prepare(s->conn, "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k", &it->from);
    if (st == KURA_OK)
        st = sq_prepare(s->conn, "SELECT k, v FROM kv ORDER BY k", &it->all);
    if (st != KURA_OK) {
        sq_iter_close((bench_it *)it);
        return st;
    }
    *it_out = (bench_it *)it;
    return KURA_OK;
}

static kura_status sq_iter_step(sq_it *it, const char *what)
{
    int rc = sqlite3_step(it->cur);
    it->valid = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        return KURA_OK;
    return sq_error(sqlite3_db_handle(it->cur), rc, what);
}

static kura_status sq_iter_seek(bench_it *bit, const void *key, size_t klen)
{
    sq_it *it = (sq_it *)bit;
    if (it->cur != NULL)
        sqlite3_reset(it->cur);
    if (key == NULL) {
        it->cur = it->all;
    } else {
        it->cur = it->from;
        /* SQLITE_TRANSIENT: the caller's key buffer may change before the next step. */
        sqlite3_bind_blob(it->cur, 1, key, (int)klen, SQLITE_TRANSIENT);
    }
    return sq_iter_step(it, "iterator seek");
}

static kura_status sq_iter_next(bench_it *bit)
{
    return sq_iter_step((sq_it *)bit, "iterator next");
}

static bool sq_iter_valid(const bench_it *bit)
{
    return ((const sq_it *)bit)->valid;
}

static const void *sq_iter_key(const bench_it *bit, size_t *klen_out)
{
    sqlite3_stmt *st = ((const sq_it *)bit)->cur;
    const void *k = sqlite3_column_blob(st, 0);
    *klen_out = (size_t)sqlite3_column_bytes(st, 0);
    return k;
}

static const void *sq_iter_value(const bench_it *bit, size_t *vlen_out)
{
    sqlite3_stmt *st = ((const sq_it *)bit)->cur;
    const void *v = sqlite3_column_blob(st, 1);
    *vlen_out = (size_t)sqlite3_column_bytes(st, 1);
    return v;
}

static kura_status sq_compact(bench_db *db)
{
    sq_db *d = (sq_db *)db;
    kura_status s = sq_exec(d->conn, "VACUUM");
    return s != KURA_OK ? s : sq_exec(d->conn, "PRAGMA wal_checkpoint(TRUNCATE)");
}

const bench_engine bench_engine_sqlite = {
    .name = "sqlite",
    .has_wal = true,
    .settings = sq_settings,
    .open = sq_open,
    .close = sq_close,
    .sess_open = sq_sess_open,
    .sess_close = sq_sess_close,
    .put = sq_put,
    .get = sq_get,
    .iter_open = sq_iter_open,
    .iter_close = sq_iter_close,
    .iter_seek = sq_iter_seek,
    .iter_next = sq_iter_next,
    .iter_valid = sq_iter_valid,
    .iter_key = sq_iter_key,
    .iter_value = sq_iter_value,
    .compact = sq_compact,
};
