/*
 * nosync_env.c - the POSIX env with no-op fsyncs (see nosync_env.h).
 *
 * Files are wrapped: an io_file's own env table handles its operations (io_sync(f) calls
 * f->env->ops->sync), so handing out the POSIX env's files unwrapped would let their syncs
 * reach the disk. The wrapper forwards everything to the POSIX file it holds, except sync.
 */
#include "crash/nosync_env.h"

#include <stdlib.h>
#include <string.h>

#include "util/status.h"

typedef struct nosync_file {
    io_file base;
    io_file *inner; /* the POSIX env's file */
} nosync_file;

static io_env nosync_singleton;

static io_env *posix(void)
{
    return io_env_posix();
}

static io_file *inner_of(io_file *f)
{
    return ((nosync_file *)f)->inner;
}

/* Wraps a freshly opened POSIX file; closes it if out of memory. */
static kura_status wrap(kura_status s, io_file *inner, io_kind kind, io_file **f_out)
{
    if (s != KURA_OK)
        return s;
    nosync_file *f = malloc(sizeof *f);
    if (!f) {
        io_close(inner);
        return kura_err(KURA_E_NOMEM, "nosync env: out of memory");
    }
    f->base.env = &nosync_singleton;
    f->base.kind = kind;
    f->inner = inner;
    *f_out = &f->base;
    return KURA_OK;
}

static kura_status ns_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_file *inner = NULL;
    kura_status s = io_open_read(posix(), path, kind, &inner);
    return wrap(s, inner, kind, f_out);
}

static kura_status ns_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_file *inner = NULL;
    kura_status s = io_open_write(posix(), path, kind, &inner);
    return wrap(s, inner, kind, f_out);
}

static kura_status ns_lock(io_env *env, const char *path, io_file **f_out)
{
    io_file *inner = NULL;
    kura_status s = io_lock(posix(), path, &inner);
    return wrap(s, inner, IO_KIND_LOCK, f_out);
}

static kura_status ns_close(io_file *f)
{
    kura_status s = io_close(inner_of(f));
    free(f);
    return s;
}

static kura_status ns_read_at(io_file *f, uint64_t off, void *buf, size_t n, size_t *nread_out)
{
    return io_read_at(inner_of(f), off, buf, n, nread_out);
}

static kura_status ns_append(io_file *f, const void *buf, size_t n)
{
    return io_append(inner_of(f), buf, n);
}

static kura_status ns_sync(io_file *f)
{
    return KURA_OK; /* the point of this env */
}

/* Like sync, a no-op: with no real durability to speed up, the zeros need not exist on
 * disk. The fault env above keeps its own model of them (zeros_end) and writes them out when
 * it simulates a power loss. */
static kura_status ns_prealloc(io_file *f, uint64_t nbytes)
{
    return KURA_OK;
}

static kura_status ns_file_size(io_file *f, uint64_t *size_out)
{
    return io_file_size(inner_of(f), size_out);
}

static kura_status ns_path_size(io_env *env, const char *path, uint64_t *size_out)
{
    return io_path_size(posix(), path, size_out);
}

static kura_status ns_rename(io_env *env, const char *from, const char *to)
{
    return io_rename(posix(), from, to);
}

static kura_status ns_unlink(io_env *env, const char *path)
{
    return io_unlink(posix(), path);
}

static kura_status ns_mkdir(io_env *env, const char *path)
{
    return io_mkdir(posix(), path);
}

static kura_status ns_rmdir(io_env *env, const char *path)
{
    return io_rmdir(posix(), path);
}

static kura_status ns_sync_dir(io_env *env, const char *path)
{
    return KURA_OK;
}

static kura_status ns_list_dir(io_env *env, const char *path, char ***names_out, size_t *n_out)
{
    return io_list_dir(posix(), path, names_out, n_out);
}

static kura_status ns_crash_point(io_env *env, const char *name)
{
    return KURA_OK;
}

static const io_ops nosync_ops = {
    .open_read = ns_open_read,
    .open_write = ns_open_write,
    .close = ns_close,
    .read_at = ns_read_at,
    .append = ns_append,
    .sync = ns_sync,
    .file_size = ns_file_size,
    .path_size = ns_path_size,
    .rename = ns_rename,
    .unlink = ns_unlink,
    .mkdir = ns_mkdir,
    .rmdir = ns_rmdir,
    .sync_dir = ns_sync_dir,
    .list_dir = ns_list_dir,
    .lock = ns_lock,
    .prealloc = ns_prealloc,
    .crash_point = ns_crash_point,
};

static io_env nosync_singleton = {&nosync_ops};

io_env *nosync_env(void)
{
    const char *real = getenv("KURA_TEST_REAL_SYNC");
    if (real && strcmp(real, "0") != 0 && *real)
        return io_env_posix();
    return &nosync_singleton;
}
