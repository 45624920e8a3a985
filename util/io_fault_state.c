/*
 * io_fault_state.c - what the fault env remembers: paths, file nodes and pending namespace
 * changes.
 *
 * This file contains path normalisation, the table of file nodes (one per file the env has
 * opened, indexed by its visible path; see util/io_fault_internal.h) and the list of undo
 * records: every create, mkdir, rename, unlink and rmdir not yet made durable by sync_dir, in
 * the order they happened. A record becomes durable when every directory it changed has been
 * synced after it; it is then "settled": the hidden file it kept for a power loss (an unlinked
 * file, a file replaced by rename) is deleted and its node is gone for good.
 * All functions expect io_fault.mu held.
 */
#include "util/io_fault_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/status.h"

/* ---- paths ---- */

char *fault_norm(const char *path)
{
    size_t n = strlen(path);
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    size_t o = 0;
    const char *p = path;
    if (*p == '/')
        out[o++] = '/';
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchrnul(p, '/');
        size_t len = (size_t)(end - p);
        if (len && !(len == 1 && p[0] == '.')) {
            if (o && out[o - 1] != '/')
                out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p = end;
    }
    if (!o)
        out[o++] = '.';
    out[o] = 0;
    return out;
}

char *fault_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

bool fault_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (strncmp(path, dir, n))
        return false;
    return path[n] == 0 || path[n] == '/' || (n && dir[n - 1] == '/');
}

bool fault_is_hidden_name(const char *name)
{
    return !strncmp(name, FAULT_HIDDEN_PREFIX, strlen(FAULT_HIDDEN_PREFIX));
}

char *fault_hidden_path(io_fault *f, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + strlen(FAULT_HIDDEN_PREFIX) + 24;
    char *h = malloc(n);
    if (!h)
        return NULL;
    snprintf(h, n, "%.*s%s%" PRIu64 ".%s", (int)dirlen, path, FAULT_HIDDEN_PREFIX,
             ++f->hidden_seq, path + dirlen);
    return h;
}

/* ---- the node table ---- */

static size_t bucket_of(io_fault *f, const char *path)
{
    return (size_t)(kura_hash64(path, strlen(path)) & (f->nbuckets - 1));
}

fault_node *fault_lookup(io_fault *f, const char *path)
{
    for (fault_node *n = f->buckets[bucket_of(f, path)]; n; n = n->hnext)
        if (!strcmp(n->path, path))
            return n;
    return NULL;
}

/* Doubles the table when it is full; on failure keeps the longer chains. */
static void table_grow(io_fault *f)
{
    size_t nb = f->nbuckets * 2;
    fault_node **b = calloc(nb, sizeof *b);
    if (!b)
        return;
    fault_node **old = f->buckets;
    size_t oldn = f->nbuckets;
    f->buckets = b;
    f->nbuckets = nb;
    for (size_t i = 0; i < oldn; i++) {
        fault_node *n = old[i], *next;
        for (; n; n = next) {
            next = n->hnext;
            size_t h = bucket_of(f, n->path);
            n->hnext = b[h];
            b[h] = n;
        }
    }
    free(old);
}

bool fault_name(io_fault *f, fault_node *n, char *path)
{
    if (!path)
        return false;
    if (n->path != path)
        free(n->path);
    n->path = path;
    if (f->nnames >= f->nbuckets)
        table_grow(f);
    size_t h = bucket_of(f, path);
    n->hnext = f->buckets[h];
    f->buckets[h] = n;
    n->visible = true;
    f->nnames++;
    return true;
}

void fault_unname(io_fault *f, fault_node *n)
{
    if (!n->visible)
        return;
    fault_node **pp = &f->buckets[bucket_of(f, n->path)];
    while (*pp != n)
        pp = &(*pp)->hnext;
    *pp = n->hnext;
    n->hnext = NULL;
    n->visible = false;
    f->nnames--;
}

fault_node *fault_node_at(io_fault *f, const char *path, io_kind kind)
{
    fault_node *n = fault_lookup(f, path);
    if (n)
        return n;
    if (!(n = calloc(1, sizeof *n)))
        return NULL;
    char *p = strdup(path);
    if (!p) {
        free(n);
        return NULL;
    }
    n->kind = kind;
    fault_name(f, n, p);
    n->prev = f->nodes_tail;
    if (f->nodes_tail)
        f->nodes_tail->next = n;
    else
        f->nodes_head = n;
    f->nodes_tail = n;
    return n;
}

static void node_free(io_fault *f, fault_node *n)
{
    fault_unname(f, n);
    if (n->prev)
        n->prev->next = n->next;
    else
        f->nodes_head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        f->nodes_tail = n->prev;
    free(n->path);
    free(n);
}

void fault_node_gone(io_fault *f, fault_node *n)
{
    fault_unname(f, n);
    free(n->path);
    n->path = NULL;
    if (n->nopen == 0)
        node_free(f, n);
}

bool fault_move_tree(io_fault *f, const char *from, const char *to)
{
    size_t flen = strlen(from), tlen = strlen(to), n = 0;
    for (fault_node *x = f->nodes_head; x; x = x->next)
        if (x->visible && fault_under(x->path, from) && x->path[flen])
            n++;
    if (!n)
        return true;
    fault_node **moved = malloc(n * sizeof *moved);
    char **paths = calloc(n, sizeof *paths);
    bool ok = moved && paths;
    size_t k = 0;
    for (fault_node *x = f->nodes_head; ok && x; x = x->next) {
        if (!x->visible || !fault_under(x->path, from) || !x->path[flen])
            continue;
        if (!(paths[k] = malloc(tlen + strlen(x->path + flen) + 1))) {
            ok = false;
            break;
        }
        memcpy(paths[k], to, tlen);
        strcpy(paths[k] + tlen, x->path + flen);
        moved[k++] = x;
    }
    if (ok) {
        /* Unname all first: a new name may equal an old name of another moved node. */
        for (size_t i = 0; i < k; i++)
            fault_unname(f, moved[i]);
        for (size_t i = 0; i < k; i++)
            fault_name(f, moved[i], paths[i]);
    } else if (paths) {
        for (size_t i = 0; i < k; i++)
            free(paths[i]);
    }
    free(moved);
    free(paths);
    return ok;
}

/* ---- undo records ---- */

kura_status fault_rec_add(io_fault *f, fault_rec_type type, char *path, char *from,
                          char *hidden, fault_node *hidden_node)
{
    fault_rec *r = calloc(1, sizeof *r);
    const char *where = path ? path : "?";
    if (!r || !path || (type == FAULT_REC_RENAME && !from))
        goto oom;
    if (!(r->dirs[0] = fault_dirname(path)))
        goto oom;
    if (from) {
        char *d = fault_dirname(from);
        if (!d)
            goto oom;
        if (strcmp(d, r->dirs[0]))
            r->dirs[1] = d;
        else
            free(d);
    }
    r->type = type;
    r->path = path;
    r->from = from;
    r->hidden = hidden;
    r->hidden_node = hidden_node;
    r->prev = f->recs_tail;
    if (f->recs_tail)
        f->recs_tail->next = r;
    else
        f->recs_head = r;
    f->recs_tail = r;
    return KURA_OK;
oom:
    if (r)
        free(r->dirs[0]);
    free(r);
    kura_status s = kura_err(KURA_E_NOMEM, "io_fault: recording a change to %s: out of memory",
                             where);
    free(path);
    free(from);
    free(hidden);
    return s;
}

static void rec_unlink(io_fault *f, fault_rec *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        f->recs_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        f->recs_tail = r->prev;
    free(r->path);
    free(r->from);
    free(r->hidden);
    free(r->dirs[0]);
    free(r->dirs[1]);
    free(r);
}

/* The record is durable: what it hid is gone for good. */
static void rec_settle(io_fault *f, fault_rec *r)
{
    if (r->hidden) {
        kura_status s = io_unlink(f->base, r->hidden);
        if (s != KURA_OK && s != KURA_E_NOT_FOUND)
            fprintf(stderr, "io_fault: deleting %s: %s\n", r->hidden, kura_last_error());
        if (r->hidden_node)
            fault_node_gone(f, r->hidden_node);
    }
    rec_unlink(f, r);
}

void fault_recs_synced(io_fault *f, const char *dir)
{
    fault_rec *r = f->recs_head, *next;
    for (; r; r = next) {
        next = r->next;
        for (int i = 0; i < 2; i++)
            if (r->dirs[i] && !strcmp(r->dirs[i], dir))
                r->durable[i] = true;
        if (r->durable[0] && (!r->dirs[1] || r->durable[1]))
            rec_settle(f, r);
    }
}

void fault_recs_settle_under(io_fault *f, const char *dir)
{
    fault_rec *r = f->recs_head, *next;
    for (; r; r = next) {
        next = r->next;
        if (fault_under(r->dirs[0], dir) || (r->dirs[1] && fault_under(r->dirs[1], dir)))
            rec_settle(f, r);
    }
}

void fault_recs_settle_all(io_fault *f)
{
    while (f->recs_head)
        rec_settle(f, f->recs_head);
}

void fault_state_forget(io_fault *f)
{
    while (f->recs_head)
        rec_unlink(f, f->recs_head);
    for (fault_node *n = f->nodes_head, *next; n; n = next) {
        next = n->next;
        free(n->path);
        free(n);
    }
    f->nodes_head = f->nodes_tail = NULL;
    memset(f->buckets, 0, f->nbuckets * sizeof *f->buckets);
    f->nnames = 0;
}
