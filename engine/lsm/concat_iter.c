/*
 * concat_iter.c - the concatenating iterator over one level's files (after LevelDB's
 * TwoLevelIterator with a LevelFileNumIterator as the index).
 *
 * This file contains an iterator that walks files 0..n-1 in order, keeping exactly one open:
 * `data`, the iterator of file `file`. When `data` runs off either end, the next (previous)
 * file is opened and positioned at its first (last) entry; files that turn out empty are
 * skipped. A seek binary-searches the largest keys for the first file whose largest key is
 * >= the target; no other file can hold an entry >= target that sorts before it. Seeking
 * into the file already open reuses its iterator (and so its cached block).
 */
#include "engine/lsm/concat_iter.h"

#include <stdbool.h>
#include <stdlib.h>

#include "util/ikey.h"
#include "util/status.h"

typedef struct concat_iter {
    kv_iter base;
    size_t n;
    const uint8_t *const *largest;
    const size_t *largest_len;
    kv_iter *(*open_file)(void *arg, size_t i);
    void *arg;
    void (*cleanup)(void *arg);
    size_t file;     /* the file `data` iterates (meaningful when data != NULL) */
    kv_iter *data;   /* NULL before the first seek, past either end, or if opening failed */
    kura_status err; /* a file failed: invalid until the next seek */
} concat_iter;

static void close_file(concat_iter *ci)
{
    kv_iter_free(ci->data);
    ci->data = NULL;
}

/* Makes `data` iterate file i, reusing it if it already does and has not failed. */
static void open_file(concat_iter *ci, size_t i)
{
    if (ci->data && ci->file == i && kv_iter_status(ci->data) == KURA_OK)
        return;
    close_file(ci);
    ci->file = i;
    ci->data = ci->open_file(ci->arg, i);
    if (!ci->data)
        ci->err = kura_err(KURA_E_NOMEM, "level iterator: out of memory opening file %zu", i);
}

/* True if `data` is exhausted without error (so the walk may move to the next file). */
static bool exhausted(concat_iter *ci)
{
    if (!ci->data || kv_iter_valid(ci->data))
        return false;
    kura_status s = kv_iter_status(ci->data);
    if (s != KURA_OK) {
        ci->err = s;
        return false;
    }
    return true;
}

static void skip_forward(concat_iter *ci)
{
    while (exhausted(ci)) {
        if (ci->file + 1 >= ci->n) {
            close_file(ci);
            return;
        }
        open_file(ci, ci->file + 1);
        if (ci->data)
            kv_iter_seek_first(ci->data);
    }
}

static void skip_backward(concat_iter *ci)
{
    while (exhausted(ci)) {
        if (ci->file == 0) {
            close_file(ci);
            return;
        }
        open_file(ci, ci->file - 1);
        if (ci->data)
            kv_iter_seek_last(ci->data);
    }
}

static bool ci_valid(const kv_iter *it)
{
    const concat_iter *ci = (const concat_iter *)it;
    return ci->data && kv_iter_valid(ci->data);
}

static void ci_seek_first(kv_iter *it)
{
    concat_iter *ci = (concat_iter *)it;
    ci->err = KURA_OK;
    if (ci->n == 0)
        return;
    open_file(ci, 0);
    if (ci->data)
        kv_iter_seek_first(ci->data);
    skip_forward(ci);
}

static void ci_seek_last(kv_iter *it)
{
    concat_iter *ci = (concat_iter *)it;
    ci->err = KURA_OK;
    if (ci->n == 0)
        return;
    open_file(ci, ci->n - 1);
    if (ci->data)
        kv_iter_seek_last(ci->data);
    skip_backward(ci);
}

static void ci_seek(kv_iter *it, const uint8_t *key, size_t klen)
{
    concat_iter *ci = (concat_iter *)it;
    ci->err = KURA_OK;
    size_t lo = 0, hi = ci->n; /* first file with largest >= key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ikey_cmp(ci->largest[mid], ci->largest_len[mid], key, klen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ci->n) {
        close_file(ci);
        return;
    }
    open_file(ci, lo);
    if (ci->data)
        kv_iter_seek(ci->data, key, klen);
    skip_forward(ci);
}

static void ci_next(kv_iter *it)
{
    concat_iter *ci = (concat_iter *)it;
    kv_iter_next(ci->data);
    skip_forward(ci);
}

static void ci_prev(kv_iter *it)
{
    concat_iter *ci = (concat_iter *)it;
    kv_iter_prev(ci->data);
    skip_backward(ci);
}

static const uint8_t *ci_key(const kv_iter *it, size_t *klen_out)
{
    return kv_iter_key(((const concat_iter *)it)->data, klen_out);
}

static const uint8_t *ci_value(const kv_iter *it, size_t *vlen_out)
{
    return kv_iter_value(((const concat_iter *)it)->data, vlen_out);
}

static kura_status ci_status(const kv_iter *it)
{
    const concat_iter *ci = (const concat_iter *)it;
    if (ci->err != KURA_OK)
        return ci->err;
    return ci->data ? kv_iter_status(ci->data) : KURA_OK;
}

static void ci_destroy(kv_iter *it)
{
    concat_iter *ci = (concat_iter *)it;
    close_file(ci);
    if (ci->cleanup)
        ci->cleanup(ci->arg);
    free(ci);
}

static const kv_iter_ops concat_iter_ops = {
    ci_valid, ci_seek_first, ci_seek_last, ci_seek,   ci_next,
    ci_prev,  ci_key,        ci_value,     ci_status, ci_destroy,
};

kv_iter *concat_iter_new(size_t n, const uint8_t *const *largest, const size_t *largest_len,
                         kv_iter *(*open_file_fn)(void *arg, size_t i), void *arg,
                         void (*cleanup)(void *arg))
{
    concat_iter *ci = malloc(sizeof *ci);
    if (!ci) {
        if (cleanup)
            cleanup(arg);
        return NULL;
    }
    *ci = (concat_iter){
        .base.ops = &concat_iter_ops,
        .n = n,
        .largest = largest,
        .largest_len = largest_len,
        .open_file = open_file_fn,
        .arg = arg,
        .cleanup = cleanup,
        .file = 0,
        .data = NULL,
        .err = KURA_OK,
    };
    return &ci->base;
}
