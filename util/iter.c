/*
 * iter.c - the empty iterator (used for empty memtables and as an error carrier).
 */
#include "util/iter.h"

#include <stdlib.h>

typedef struct empty_iter {
    kv_iter base;
    kura_status status;
} empty_iter;

static bool e_valid(const kv_iter *it)
{
    (void)it;
    return false;
}
static void e_nop(kv_iter *it)
{
    (void)it;
}
static void e_seek(kv_iter *it, const uint8_t *k, size_t n)
{
    (void)it, (void)k, (void)n;
}
static const uint8_t *e_kv(const kv_iter *it, size_t *n)
{
    (void)it;
    *n = 0;
    return NULL;
}
static kura_status e_status(const kv_iter *it)
{
    return ((const empty_iter *)it)->status;
}
static void e_destroy(kv_iter *it)
{
    free(it);
}

static const kv_iter_ops empty_ops = {e_valid, e_nop,  e_nop,    e_seek,   e_nop,
                                      e_nop,   e_kv,   e_kv,     e_status, e_destroy};

kv_iter *kv_iter_empty(kura_status s)
{
    empty_iter *it = malloc(sizeof *it);
    if (!it)
        return NULL;
    it->base.ops = &empty_ops;
    it->status = s;
    return &it->base;
}
