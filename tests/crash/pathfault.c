/*
 * pathfault.c - fault injection by path (see pathfault.h).
 *
 * Files are wrapped like nosync_env.c does: an io_file's operations go through the env table
 * of the file itself, so each file handed out carries its path and whether it matches.
 */
#include "crash/pathfault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"
#include "util/thread.h"

struct pathfault {
    io_env env; /* first: the env table's functions get it back by a cast */
    io_env *base;
    char *substr;
    kmutex mu;
    uint64_t at, matching, injected;
    uint32_t op_mask;
    int error;
    bool persistent;
    char first[512];
    io_op first_op;
};

typedef struct pf_file {
    io_file hdr;
    io_file *inner;
    bool match;
    char path[];
} pf_file;

static const char *const k_op_names[IO_OP_COUNT] = {
    "open", "read", "append", "sync", "close", "size", "rename", "unlink", "mkdir",
    "sync_dir", "list",
};

static pathfault *pf_of(io_env *env)
{
    return (pathfault *)env;
}

static pf_file *file_of(io_file *f)
{
    return (pf_file *)f;
}

static bool matches(pathfault *p, const char *path)
{
    return path && strstr(path, p->substr) != NULL;
}

/* Counts a matching operation; KURA_OK, or the injected failure. */
static kura_status check(pathfault *p, bool match, io_op op, const char *path)
{
    if (!match)
        return KURA_OK;
    kmutex_lock(&p->mu);
    bool fail = false;
    if (p->at && (!p->op_mask || (p->op_mask & (1u << op)))) {
        p->matching++;
        fail = p->matching == p->at || (p->persistent && p->matching > p->at);
        if (fail && p->injected++ == 0) {
            snprintf(p->first, sizeof p->first, "%s %s", k_op_names[op], path);
            p->first_op = op;
        }
    } else if (!p->at) {
        p->matching++;
    }
    int error = p->error;
    kmutex_unlock(&p->mu);
    if (!fail)
        return KURA_OK;
    return kura_err(error == ENOSPC ? KURA_E_NOSPC : KURA_E_IO, "%s %s: injected %s (pathfault)",
                    k_op_names[op], path, error == ENOSPC ? "ENOSPC" : "EIO");
}

static kura_status wrap(pathfault *p, kura_status s, io_file *inner, const char *path,
                        io_kind kind, io_file **f_out)
{
    if (s != KURA_OK)
        return s;
    size_t n = strlen(path);
    pf_file *f = malloc(sizeof *f + n + 1);
    if (!f) {
        io_close(inner);
        return kura_err(KURA_E_NOMEM, "pathfault: out of memory");
    }
    f->hdr.env = &p->env;
    f->hdr.kind = kind;
    f->inner = inner;
    f->match = matches(p, path);
    memcpy(f->path, path, n + 1);
    *f_out = &f->hdr;
    return KURA_OK;
}

static kura_status pf_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_OPEN, path);
    io_file *inner = NULL;
    if (s == KURA_OK)
        s = io_open_read(p->base, path, kind, &inner);
    return wrap(p, s, inner, path, kind, f_out);
}

static kura_status pf_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_OPEN, path);
    io_file *inner = NULL;
    if (s == KURA_OK)
        s = io_open_write(p->base, path, kind, &inner);
    return wrap(p, s, inner, path, kind, f_out);
}

static kura_status pf_lock(io_env *env, const char *path, io_file **f_out)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_OPEN, path);
    io_file *inner = NULL;
    if (s == KURA_OK)
        s = io_lock(p->base, path, &inner);
    return wrap(p, s, inner, path, IO_KIND_LOCK, f_out);
}

static kura_status pf_close(io_file *f)
{
    pf_file *pf = file_of(f);
    kura_status s = check(pf_of(f->env), pf->match, IO_OP_CLOSE, pf->path);
    kura_status c = io_close(pf->inner); /* closed even when the close "fails" */
    free(pf);
    return s != KURA_OK ? s : c;
}

static kura_status pf_read_at(io_file *f, uint64_t off, void *buf, size_t n, size_t *nread_out)
{
    pf_file *pf = file_of(f);
    kura_status s = check(pf_of(f->env), pf->match, IO_OP_READ, pf->path);
    return s != KURA_OK ? s : io_read_at(pf->inner, off, buf, n, nread_out);
}

static kura_status pf_append(io_file *f, const void *buf, size_t n)
{
    pf_file *pf = file_of(f);
    kura_status s = check(pf_of(f->env), pf->match, IO_OP_APPEND, pf->path);
    return s != KURA_OK ? s : io_append(pf->inner, buf, n);
}

static kura_status pf_sync(io_file *f)
{
    pf_file *pf = file_of(f);
    kura_status s = check(pf_of(f->env), pf->match, IO_OP_SYNC, pf->path);
    return s != KURA_OK ? s : io_sync(pf->inner);
}

static kura_status pf_prealloc(io_file *f, uint64_t nbytes)
{
    pf_file *pf = file_of(f);
    kura_status s = check(pf_of(f->env), pf->match, IO_OP_APPEND, pf->path);
    return s != KURA_OK ? s : io_prealloc(pf->inner, nbytes);
}

static kura_status pf_file_size(io_file *f, uint64_t *size_out)
{
    pf_file *pf = file_of(f);
    kura_status s = check(pf_of(f->env), pf->match, IO_OP_SIZE, pf->path);
    return s != KURA_OK ? s : io_file_size(pf->inner, size_out);
}

static kura_status pf_path_size(io_env *env, const char *path, uint64_t *size_out)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_SIZE, path);
    return s != KURA_OK ? s : io_path_size(p->base, path, size_out);
}

static kura_status pf_rename(io_env *env, const char *from, const char *to)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, from) || matches(p, to), IO_OP_RENAME, to);
    return s != KURA_OK ? s : io_rename(p->base, from, to);
}

static kura_status pf_unlink(io_env *env, const char *path)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_UNLINK, path);
    return s != KURA_OK ? s : io_unlink(p->base, path);
}

static kura_status pf_mkdir(io_env *env, const char *path)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_MKDIR, path);
    return s != KURA_OK ? s : io_mkdir(p->base, path);
}

static kura_status pf_rmdir(io_env *env, const char *path)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_UNLINK, path);
    return s != KURA_OK ? s : io_rmdir(p->base, path);
}

static kura_status pf_sync_dir(io_env *env, const char *path)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_SYNC_DIR, path);
    return s != KURA_OK ? s : io_sync_dir(p->base, path);
}

static kura_status pf_list_dir(io_env *env, const char *path, char ***names_out, size_t *n_out)
{
    pathfault *p = pf_of(env);
    kura_status s = check(p, matches(p, path), IO_OP_LIST, path);
    return s != KURA_OK ? s : io_list_dir(p->base, path, names_out, n_out);
}

static kura_status pf_crash_point(io_env *env, const char *name)
{
    return io_crash_point(pf_of(env)->base, name);
}

static const io_ops pf_ops = {
    .open_read = pf_open_read,
    .open_write = pf_open_write,
    .close = pf_close,
    .read_at = pf_read_at,
    .append = pf_append,
    .sync = pf_sync,
    .file_size = pf_file_size,
    .path_size = pf_path_size,
    .rename = pf_rename,
    .unlink = pf_unlink,
    .mkdir = pf_mkdir,
    .rmdir = pf_rmdir,
    .sync_dir = pf_sync_dir,
    .list_dir = pf_list_dir,
    .lock = pf_lock,
    .prealloc = pf_prealloc,
    .crash_point = pf_crash_point,
};

pathfault *pathfault_new(io_env *base, const char *substr)
{
    pathfault *p = calloc(1, sizeof *p);
    if (!p || !(p->substr = strdup(substr))) {
        free(p);
        return NULL;
    }
    p->env.ops = &pf_ops;
    p->base = base;
    p->first_op = IO_OP_COUNT;
    kmutex_init(&p->mu);
    return p;
}

void pathfault_free(pathfault *p)
{
    if (!p)
        return;
    kmutex_destroy(&p->mu);
    free(p->substr);
    free(p);
}

io_env *pathfault_env(pathfault *p)
{
    return &p->env;
}

void pathfault_set(pathfault *p, uint64_t at, uint32_t op_mask, int error, bool persistent)
{
    kmutex_lock(&p->mu);
    p->at = at;
    p->op_mask = op_mask;
    p->error = error;
    p->persistent = persistent;
    p->matching = p->injected = 0;
    p->first[0] = 0;
    p->first_op = IO_OP_COUNT;
    kmutex_unlock(&p->mu);
}

uint64_t pathfault_matching(pathfault *p)
{
    kmutex_lock(&p->mu);
    uint64_t n = p->matching;
    kmutex_unlock(&p->mu);
    return n;
}

uint64_t pathfault_injected(pathfault *p)
{
    kmutex_lock(&p->mu);
    uint64_t n = p->injected;
    kmutex_unlock(&p->mu);
    return n;
}

const char *pathfault_first(pathfault *p)
{
    return p->first;
}

io_op pathfault_first_op(pathfault *p)
{
    return p->first_op;
}
