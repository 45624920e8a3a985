/*
 * io_fault_ns.c - the fault env's namespace operations: rename, unlink, mkdir, rmdir,
 * sync_dir, list_dir.
 *
 * This file contains the operations that change or read directories. Each change is done on the
 * base env so that it can be undone by a power loss until sync_dir makes it durable, and is
 * recorded (io_fault_state.c):
 *   unlink      renames the file to a hidden name in the same directory (one atomic rename; the
 *               file is gone from its name as after unlink(2), and still there to come back);
 *   rename      over an existing file first copies that file to a hidden name, then renames
 *               (so the real rename stays atomic: a kill -9 never sees the target missing);
 *   mkdir/rmdir are recorded in the parent directory;
 *   sync_dir    makes the records of that directory durable and deletes their hidden files.
 * list_dir hides the hidden names. rmdir and a rename of a directory first settle the pending
 * records inside it (documented in io_fault.h).
 */
#include "util/io_fault_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

#define COPY_CHUNK (64 * 1024)

static kura_status oom(const char *what, const char *path)
{
    return kura_err(KURA_E_NOMEM, "%s %s: out of memory", what, path);
}

/* Keeps the message of a failure while cleanup calls may overwrite it. */
typedef struct saved_err {
    kura_status s;
    char msg[512];
} saved_err;

static void err_save(saved_err *e, kura_status s)
{
    e->s = s;
    snprintf(e->msg, sizeof e->msg, "%s", kura_last_error());
}

static kura_status err_restore(const saved_err *e)
{
    return kura_err(e->s, "%s", e->msg);
}

bool fault_is_dir(io_env *base, const char *path)
{
    char **names;
    size_t n;
    if (io_list_dir(base, path, &names, &n) != KURA_OK)
        return false;
    io_free_names(names, n);
    return true;
}

kura_status fault_copy_file(io_env *base, const char *src, const char *dst)
{
    io_file *in = NULL, *out = NULL;
    char *buf = malloc(COPY_CHUNK);
    kura_status s = buf ? io_open_read(base, src, IO_KIND_OTHER, &in) : oom("copy", src);
    if (s == KURA_OK)
        s = io_open_write(base, dst, IO_KIND_OTHER, &out);
    for (uint64_t off = 0; s == KURA_OK;) {
        size_t got = 0;
        if ((s = io_read_at(in, off, buf, COPY_CHUNK, &got)) != KURA_OK || got == 0)
            break;
        s = io_append(out, buf, got);
        off += got;
    }
    kura_status cs = io_close(out);
    if (s == KURA_OK)
        s = cs;
    io_close(in);
    free(buf);
    return s;
}

kura_status fault_remove_tree(io_env *base, const char *path)
{
    char **names;
    size_t n;
    if (io_list_dir(base, path, &names, &n) != KURA_OK) {
        kura_status s = io_unlink(base, path);
        return s == KURA_E_NOT_FOUND ? KURA_OK : s;
    }
    kura_status s = KURA_OK;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *child = malloc(len);
        if (!child) {
            s = oom("remove", path);
            break;
        }
        snprintf(child, len, "%s/%s", path, names[i]);
        s = fault_remove_tree(base, child);
        free(child);
    }
    io_free_names(names, n);
    return s == KURA_OK ? io_rmdir(base, path) : s;
}

/* ---- rename ---- */

/* The node replaced at `to` is now the hidden copy (or gone when there is no copy). */
static fault_node *park_replaced(io_fault *f, const char *to, const char *hidden)
{
    fault_node *old = fault_lookup(f, to);
    if (!old)
        return NULL;
    fault_unname(f, old);
    char *hp = hidden ? strdup(hidden) : NULL;
    if (!hp) {
        fault_node_gone(f, old);
        return NULL;
    }
    free(old->path);
    old->path = hp;
    return old;
}

static kura_status rename_locked(io_fault *f, const char *from, const char *to)
{
    uint64_t size;
    if (!strcmp(from, to))
        return io_rename(f->base, from, to);
    kura_status s = io_path_size(f->base, from, &size);
    if (s == KURA_E_NOT_FOUND)
        return kura_err(KURA_E_IO, "rename %s -> %s: no such file", from, to);
    if (s != KURA_OK)
        return s;
    fault_node *nf = fault_lookup(f, from);
    bool from_dir = !nf && fault_is_dir(f->base, from);
    s = io_path_size(f->base, to, &size);
    if (s != KURA_OK && s != KURA_E_NOT_FOUND)
        return s;
    bool to_exists = s == KURA_OK;
    bool to_dir = to_exists && fault_is_dir(f->base, to);
    char *hidden = NULL;
    if (from_dir) {
        fault_recs_settle_under(f, from);
        if (to_dir)
            fault_recs_settle_under(f, to);
    } else if (to_exists && !to_dir) {
        if (!(hidden = fault_hidden_path(f, to)))
            return oom("rename", from);
        if ((s = fault_copy_file(f->base, to, hidden)) != KURA_OK) {
            saved_err e;
            err_save(&e, s);
            io_unlink(f->base, hidden);
            free(hidden);
            return err_restore(&e);
        }
    }
    if ((s = io_rename(f->base, from, to)) != KURA_OK) {
        if (hidden) {
            saved_err e;
            err_save(&e, s);
            io_unlink(f->base, hidden);
            free(hidden);
            s = err_restore(&e);
        }
        return s;
    }
    fault_node *old = park_replaced(f, to, hidden);
    if (nf) {
        fault_unname(f, nf);
        if (!fault_name(f, nf, strdup(to)))
            fault_node_gone(f, nf);
    }
    if (from_dir && !fault_move_tree(f, from, to))
        fprintf(stderr, "io_fault: rename %s -> %s: out of memory moving paths\n", from, to);
    s = fault_rec_add(f, FAULT_REC_RENAME, strdup(to), strdup(from), hidden, old);
    if (s == KURA_OK)
        f->recs_tail->replaced_dir = to_dir;
    return s;
}

kura_status fault_rename(io_env *env, const char *from, const char *to)
{
    io_fault *f = fault_of(env);
    char *pf = fault_norm(from), *pt = fault_norm(to);
    kura_status s;
    int inj;
    if (!pf || !pt) {
        s = oom("rename", from);
        goto out;
    }
    kmutex_lock(&f->mu);
    fault_node *n = fault_lookup(f, pf);
    s = fault_gate(f, IO_OP_RENAME, n ? n->kind : IO_KIND_OTHER, true, "rename", pf, &inj);
    if (s == KURA_OK)
        s = rename_locked(f, pf, pt);
    kmutex_unlock(&f->mu);
out:
    free(pf);
    free(pt);
    return s;
}

/* ---- unlink, mkdir, rmdir ---- */

static kura_status unlink_locked(io_fault *f, const char *p, fault_node *n)
{
    uint64_t size;
    kura_status s = io_path_size(f->base, p, &size);
    if (s == KURA_E_NOT_FOUND)
        return kura_err(KURA_E_NOT_FOUND, "unlink %s: no such file", p);
    if (s != KURA_OK)
        return s;
    if (!n && fault_is_dir(f->base, p))
        return kura_err(KURA_E_IO, "unlink %s: is a directory", p);
    char *hidden = fault_hidden_path(f, p);
    if (!hidden)
        return oom("unlink", p);
    if ((s = io_rename(f->base, p, hidden)) != KURA_OK) {
        free(hidden);
        return s;
    }
    if (n) {
        fault_unname(f, n);
        char *hp = strdup(hidden);
        if (hp) {
            free(n->path);
            n->path = hp;
        } else {
            fault_node_gone(f, n);
            n = NULL;
        }
    }
    return fault_rec_add(f, FAULT_REC_UNLINK, strdup(p), NULL, hidden, n);
}

kura_status fault_unlink(io_env *env, const char *path)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("unlink", path);
    int inj;
    kmutex_lock(&f->mu);
    fault_node *n = fault_lookup(f, p);
    kura_status s =
        fault_gate(f, IO_OP_UNLINK, n ? n->kind : IO_KIND_OTHER, true, "unlink", p, &inj);
    if (s == KURA_OK)
        s = unlink_locked(f, p, n);
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

kura_status fault_mkdir(io_env *env, const char *path)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("mkdir", path);
    int inj;
    uint64_t size;
    kmutex_lock(&f->mu);
    kura_status s = fault_gate(f, IO_OP_MKDIR, IO_KIND_OTHER, true, "mkdir", p, &inj);
    if (s == KURA_OK) {
        bool existed = io_path_size(f->base, p, &size) == KURA_OK;
        s = io_mkdir(f->base, p);
        if (s == KURA_OK && !existed)
            s = fault_rec_add(f, FAULT_REC_MKDIR, strdup(p), NULL, NULL, NULL);
    }
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

/* Empties p of hidden files if that is all it holds, so that rmdir can succeed: the pending
 * changes inside are settled first, then leftovers of earlier processes are deleted. */
static void rmdir_settle(io_fault *f, const char *p)
{
    char **names;
    size_t n;
    if (io_list_dir(f->base, p, &names, &n) != KURA_OK)
        return;
    bool only_hidden = n > 0;
    for (size_t i = 0; i < n; i++)
        only_hidden = only_hidden && fault_is_hidden_name(names[i]);
    io_free_names(names, n);
    if (!only_hidden)
        return;
    fault_recs_settle_under(f, p);
    if (io_list_dir(f->base, p, &names, &n) != KURA_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(p) + strlen(names[i]) + 2;
        char *child = malloc(len);
        if (child) {
            snprintf(child, len, "%s/%s", p, names[i]);
            fault_remove_tree(f->base, child);
            free(child);
        }
    }
    io_free_names(names, n);
}

kura_status fault_rmdir(io_env *env, const char *path)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("rmdir", path);
    int inj;
    kmutex_lock(&f->mu);
    kura_status s = fault_gate(f, IO_OP_UNLINK, IO_KIND_OTHER, true, "rmdir", p, &inj);
    if (s == KURA_OK) {
        rmdir_settle(f, p);
        s = io_rmdir(f->base, p);
        if (s == KURA_OK)
            s = fault_rec_add(f, FAULT_REC_RMDIR, strdup(p), NULL, NULL, NULL);
    }
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

/* ---- sync_dir, list_dir ---- */

kura_status fault_sync_dir(io_env *env, const char *path)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("sync_dir", path);
    int inj;
    kmutex_lock(&f->mu);
    kura_status s = fault_gate(f, IO_OP_SYNC_DIR, IO_KIND_OTHER, true, "sync_dir", p, &inj);
    if (s == KURA_OK && (s = io_sync_dir(f->base, p)) == KURA_OK)
        fault_recs_synced(f, p);
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

kura_status fault_list_dir(io_env *env, const char *path, char ***names_out, size_t *n_out)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("list", path);
    int inj;
    char **names = NULL;
    size_t n = 0;
    kmutex_lock(&f->mu);
    kura_status s = fault_gate(f, IO_OP_LIST, IO_KIND_OTHER, false, "list", p, &inj);
    if (s == KURA_OK)
        s = io_list_dir(f->base, p, &names, &n);
    kmutex_unlock(&f->mu);
    free(p);
    if (s != KURA_OK)
        return s;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (fault_is_hidden_name(names[i]))
            free(names[i]);
        else
            names[kept++] = names[i];
    }
    *names_out = names;
    *n_out = kept;
    return KURA_OK;
}
