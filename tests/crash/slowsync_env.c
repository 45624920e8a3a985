/*
 * slowsync_env.c - a forwarding env whose WAL syncs take time (see slowsync_env.h).
 *
 * Files are wrapped like nosync_env.c's: an io_file's own env handles its operations, so the
 * wrapper keeps the inner env's file and forwards to it.
 */
#include "crash/slowsync_env.h"

#include <stdlib.h>
#include <time.h>

#include "util/status.h"

struct slowsync_env {
    io_env base; /* first: the io_env handed out is the slowsync_env */
    io_env *inner;
    unsigned delay_us; /* atomic */
    slowsync_hook hook;
    void *hook_arg;
};

typedef struct slow_file {
    io_file base;
    io_file *inner;
} slow_file;

static slowsync_env *env_of(io_env *env)
{
    return (slowsync_env *)env;
}

static io_file *inner_of(io_file *f)
{
    return ((slow_file *)f)->inner;
}

static kura_status wrap(io_env *env, kura_status s, io_file *inner, io_kind kind,
                        io_file **f_out)
{
    if (s != KURA_OK)
        return s;
    slow_file *f = malloc(sizeof *f);
    if (!f) {
        io_close(inner);
        return kura_err(KURA_E_NOMEM, "slowsync env: out of memory");
    }
    f->base.env = env;
    f->base.kind = kind;
    f->inner = inner;
    *f_out = &f->base;
    return KURA_OK;
}

static kura_status ss_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_file *inner = NULL;
    kura_status s = io_open_read(env_of(env)->inner, path, kind, &inner);
    return wrap(env, s, inner, kind, f_out);
}

static kura_status ss_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_file *inner = NULL;
    kura_status s = io_open_write(env_of(env)->inner, path, kind, &inner);
    return wrap(env, s, inner, kind, f_out);
}

static kura_status ss_lock(io_env *env, const char *path, io_file **f_out)
{
    io_file *inner = NULL;
    kura_status s = io_lock(env_of(env)->inner, path, &inner);
    return wrap(env, s, inner, IO_KIND_LOCK, f_out);
}

static kura_status ss_close(io_file *f)
{
    kura_status s = io_close(inner_of(f));
    free(f);
    return s;
}

static kura_status ss_read_at(io_file *f, uint64_t off, void *buf, size_t n, size_t *nread_out)
{
    return io_read_at(inner_of(f), off, buf, n, nread_out);
}

static kura_status ss_append(io_file *f, const void *buf, size_t n)
{
    return io_append(inner_of(f), buf, n);
}

static kura_status ss_sync(io_file *f)
{
    unsigned us = __atomic_load_n(&env_of(f->env)->delay_us, __ATOMIC_RELAXED);
    if (us && f->kind == IO_KIND_WAL) {
        struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000L};
        nanosleep(&ts, NULL);
    }
    return io_sync(inner_of(f));
}

static kura_status ss_prealloc(io_file *f, uint64_t nbytes)
{
    return io_prealloc(inner_of(f), nbytes);
}

static kura_status ss_file_size(io_file *f, uint64_t *size_out)
{
    return io_file_size(inner_of(f), size_out);
}

static kura_status ss_path_size(io_env *env, const char *path, uint64_t *size_out)
{
    return io_path_size(env_of(env)->inner, path, size_out);
}

static kura_status ss_rename(io_env *env, const char *from, const char *to)
{
    return io_rename(env_of(env)->inner, from, to);
}

static kura_status ss_unlink(io_env *env, const char *path)
{
    return io_unlink(env_of(env)->inner, path);
}

static kura_status ss_mkdir(io_env *env, const char *path)
{
    return io_mkdir(env_of(env)->inner, path);
}

static kura_status ss_rmdir(io_env *env, const char *path)
{
    return io_rmdir(env_of(env)->inner, path);
}

static kura_status ss_sync_dir(io_env *env, const char *path)
{
    return io_sync_dir(env_of(env)->inner, path);
}

static kura_status ss_list_dir(io_env *env, const char *path, char ***names_out, size_t *n_out)
{
    return io_list_dir(env_of(env)->inner, path, names_out, n_out);
}

static kura_status ss_crash_point(io_env *env, const char *name)
{
    slowsync_env *e = env_of(env);
    if (e->hook) {
        kura_status s = e->hook(e->hook_arg, name);
        if (s != KURA_OK)
            return s;
    }
    return io_crash_point(env_of(env)->inner, name);
}

static const io_ops slowsync_ops = {
    .open_read = ss_open_read,
    .open_write = ss_open_write,
    .close = ss_close,
    .read_at = ss_read_at,
    .append = ss_append,
    .sync = ss_sync,
    .file_size = ss_file_size,
    .path_size = ss_path_size,
    .rename = ss_rename,
    .unlink = ss_unlink,
    .mkdir = ss_mkdir,
    .rmdir = ss_rmdir,
    .sync_dir = ss_sync_dir,
    .list_dir = ss_list_dir,
    .lock = ss_lock,
    .prealloc = ss_prealloc,
    .crash_point = ss_crash_point,
};

slowsync_env *slowsync_new(io_env *inner)
{
    slowsync_env *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->base.ops = &slowsync_ops;
    e->inner = inner;
    return e;
}

void slowsync_free(slowsync_env *e)
{
    free(e);
}

io_env *slowsync_io(slowsync_env *e)
{
    return &e->base;
}

void slowsync_set_delay(slowsync_env *e, unsigned us)
{
    __atomic_store_n(&e->delay_us, us, __ATOMIC_RELAXED);
}

void slowsync_set_hook(slowsync_env *e, slowsync_hook fn, void *arg)
{
    e->hook = fn;
    e->hook_arg = arg;
}
