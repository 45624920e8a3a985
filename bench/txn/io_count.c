/*
 * io_count.c - the transaction workloads' fsync counter (txn_int.h): an io_env that passes
 * every operation to the POSIX env and counts and times the fdatasyncs of the files kura
 * writes, by class.
 *
 * Only files opened for writing are wrapped (a cnt_file holds the POSIX file and its class);
 * files opened for reading and the lock file are the POSIX env's own, so their operations go
 * straight to it. The counters are relaxed atomics: the workloads read them before and after
 * their timed part, when no sync of theirs is in flight.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/io.h"
#include "util/status.h"

enum { CLS_WAL, CLS_LOG, CLS_OTHER };

struct btx_io {
    io_env base; /* first: the env kura is given */
    io_env *inner;
    atomic_uint_fast64_t syncs[3], sync_ns[3], preallocs;
};

typedef struct cnt_file {
    io_file base; /* first: base.env is the counting env */
    io_file *inner;
    int cls;
} cnt_file;

static btx_io *env_of(io_env *e)
{
    return (btx_io *)e;
}

static cnt_file *file_of(io_file *f)
{
    return (cnt_file *)f;
}

static kura_status c_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_env *in = env_of(env)->inner;
    return in->ops->open_read(in, path, kind, f_out);
}

static kura_status c_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    cnt_file *cf = malloc(sizeof *cf);
    if (!cf) return kura_err(KURA_E_NOMEM, "%s: out of memory", path);
    io_env *in = env_of(env)->inner;
    kura_status s = in->ops->open_write(in, path, kind, &cf->inner);
    if (s != KURA_OK) {
        free(cf);
        return s;
    }
    cf->base = (io_file){.env = env, .kind = kind};
    cf->cls = kind != IO_KIND_WAL ? CLS_OTHER : strstr(path, "#txn") ? CLS_LOG : CLS_WAL;
    *f_out = &cf->base;
    return KURA_OK;
}

static kura_status c_close(io_file *f)
{
    cnt_file *cf = file_of(f);
    kura_status s = io_close(cf->inner);
    free(cf);
    return s;
}

static kura_status c_read_at(io_file *f, uint64_t off, void *buf, size_t n, size_t *nread_out)
{
    return io_read_at(file_of(f)->inner, off, buf, n, nread_out);
}

static kura_status c_append(io_file *f, const void *buf, size_t n)
{
    return io_append(file_of(f)->inner, buf, n);
}

static kura_status c_sync(io_file *f)
{
    cnt_file *cf = file_of(f);
    btx_io *io = env_of(f->env);
    uint64_t t0 = know_ns();
    kura_status s = io_sync(cf->inner);
    atomic_fetch_add_explicit(&io->sync_ns[cf->cls], know_ns() - t0, memory_order_relaxed);
    atomic_fetch_add_explicit(&io->syncs[cf->cls], 1, memory_order_relaxed);
    return s;
}

static kura_status c_file_size(io_file *f, uint64_t *size_out)
{
    return io_file_size(file_of(f)->inner, size_out);
}

static kura_status c_prealloc(io_file *f, uint64_t nbytes)
{
    atomic_fetch_add_explicit(&env_of(f->env)->preallocs, 1, memory_order_relaxed);
    return io_prealloc(file_of(f)->inner, nbytes);
}

static kura_status c_path_size(io_env *env, const char *path, uint64_t *size_out)
{
    return io_path_size(env_of(env)->inner, path, size_out);
}

static kura_status c_rename(io_env *env, const char *from, const char *to)
{
    return io_rename(env_of(env)->inner, from, to);
}

static kura_status c_unlink(io_env *env, const char *path)
{
    return io_unlink(env_of(env)->inner, path);
}

static kura_status c_mkdir(io_env *env, const char *path)
{
    return io_mkdir(env_of(env)->inner, path);
}

static kura_status c_rmdir(io_env *env, const char *path)
{
    return io_rmdir(env_of(env)->inner, path);
}

static kura_status c_sync_dir(io_env *env, const char *path)
{
    atomic_fetch_add_explicit(&env_of(env)->syncs[CLS_OTHER], 1, memory_order_relaxed);
    return io_sync_dir(env_of(env)->inner, path);
}

static kura_status c_list_dir(io_env *env, const char *path, char ***names_out, size_t *n_out)
{
    return io_list_dir(env_of(env)->inner, path, names_out, n_out);
}

static kura_status c_lock(io_env *env, const char *path, io_file **f_out)
{
    return io_lock(env_of(env)->inner, path, f_out);
}

static kura_status c_crash_point(io_env *env, const char *name)
{
    return io_crash_point(env_of(env)->inner, name);
}

static const io_ops count_ops = {
    .open_read = c_open_read,
    .open_write = c_open_write,
    .close = c_close,
    .read_at = c_read_at,
    .append = c_append,
    .sync = c_sync,
    .file_size = c_file_size,
    .path_size = c_path_size,
    .rename = c_rename,
    .unlink = c_unlink,
    .mkdir = c_mkdir,
    .rmdir = c_rmdir,
    .sync_dir = c_sync_dir,
    .list_dir = c_list_dir,
    .lock = c_lock,
    .prealloc = c_prealloc,
    .crash_point = c_crash_point,
};

btx_io *btx_io_new(void)
{
    btx_io *io = calloc(1, sizeof *io);
    if (io) {
        io->base.ops = &count_ops;
        io->inner = io_env_posix();
    }
    return io;
}

void btx_io_free(btx_io *io)
{
    free(io);
}

io_env *btx_io_env(btx_io *io)
{
    return &io->base;
}

void btx_io_read(btx_io *io, btx_io_counts *out)
{
    *out = (btx_io_counts){
        .wal_syncs = atomic_load(&io->syncs[CLS_WAL]),
        .wal_sync_ns = atomic_load(&io->sync_ns[CLS_WAL]),
        .log_syncs = atomic_load(&io->syncs[CLS_LOG]),
        .log_sync_ns = atomic_load(&io->sync_ns[CLS_LOG]),
        .other_syncs = atomic_load(&io->syncs[CLS_OTHER]),
        .preallocs = atomic_load(&io->preallocs),
    };
}

void btx_io_report(const btx_io_counts *a, const btx_io_counts *b, uint64_t calls, double seconds,
                   bench_run *run)
{
    double n = calls ? (double)calls : 1;
    uint64_t wal = b->wal_syncs - a->wal_syncs, log = b->log_syncs - a->log_syncs;
    uint64_t wal_ns = b->wal_sync_ns - a->wal_sync_ns, log_ns = b->log_sync_ns - a->log_sync_ns;
    bench_run_extra(run, "wal_syncs_per_call", (double)wal / n);
    bench_run_extra(run, "txnlog_syncs_per_call", (double)log / n);
    bench_run_extra(run, "wal_sync_us", wal ? (double)wal_ns / (double)wal / 1e3 : 0);
    bench_run_extra(run, "txnlog_sync_us", log ? (double)log_ns / (double)log / 1e3 : 0);
    bench_run_extra(run, "syncs_in_flight",
                    seconds > 0 ? (double)(wal_ns + log_ns) / 1e9 / seconds : 0);
    bench_run_extra(run, "other_syncs", (double)(b->other_syncs - a->other_syncs));
    bench_run_extra(run, "preallocs", (double)(b->preallocs - a->preallocs));
}
