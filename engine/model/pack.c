/*
 * pack.c - This file contains packed values (value.h, "Storage"): the reference-counted
 * block that holds every array, name and byte string of a value in one allocation, the
 * helpers that lay a value out in it (used by the decoder, codec.c), the public S and B
 * nodes that share one allocation with their bytes, and val_copy, which packs a copy of a
 * value tree.
 *
 * A block is a small header (the count) followed by the node arrays, then the bytes: arrays
 * first keeps them 8-byte aligned, since every array size is a multiple of 8 (a kura_value or
 * a kura_attr is). Packing is two passes over the source: one measures the arrays, the bytes
 * and the nodes that will hold a reference (val_pack_size), the block is allocated once with
 * its count already final, and the second pass fills it front to back. Nothing in the second
 * pass can fail, so a packed value is never half built.
 *
 * The count only ever goes down after packing (copies pack anew rather than share), so a
 * holder that sees 1 is the last one and frees the block without the atomic decrement.
 *
 * kura_value_s() and kura_value_b() return a heap node; putting it into a map or list moves
 * its value out and frees the node. val_new_bytes() makes the node and its bytes one block
 * (marked `shell`) holding two references, the value's and the node's, so that the bytes
 * survive the node: one allocation per string instead of two. val_shell_of() recognises such
 * a node (it sits at the start of a shell block), and val_free_node() frees a heap node either
 * way.
 */
#include "engine/model/value.h"

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct val_block {
    atomic_size_t refs;
    bool shell; /* a heap node sits at the start of the space (val_new_bytes) */
};

/* The header, rounded up so that the arrays after it are aligned for any node. */
#define VAL_BLOCK_HDR ((sizeof(val_block) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

val_block *val_block_new(const val_pack_size *sz, val_pack *pk)
{
    assert(sz->arr % alignof(kura_value) == 0);
    if (sz->arr > SIZE_MAX / 2 || sz->str > SIZE_MAX / 2 - VAL_BLOCK_HDR - sz->arr) return NULL;
    val_block *b = malloc(VAL_BLOCK_HDR + sz->arr + sz->str);
    if (!b) return NULL;
    atomic_init(&b->refs, sz->refs);
    b->shell = false;
    pk->blk = b;
    pk->arr = (uint8_t *)b + VAL_BLOCK_HDR;
    pk->str = pk->arr + sz->arr;
    return b;
}

void val_block_release(val_block *b)
{
    if (atomic_load_explicit(&b->refs, memory_order_acquire) == 1 ||
        atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        free(b);
}

/* ---- Heap nodes sharing a block with their bytes ------------------------------------------ */

kura_value *val_new_bytes(kura_type type, const void *p, size_t len)
{
    if (len > UINT32_MAX - 1) {
        kura_err(KURA_E_INVALID, "value of %zu bytes is too large", len);
        return NULL;
    }
    val_pack_size sz = {sizeof(kura_value), len + 1, 2}; /* the node's value, and the node */
    val_pack pk;
    val_block *b = val_block_new(&sz, &pk);
    if (!b) {
        kura_err(KURA_E_NOMEM, "out of memory");
        return NULL;
    }
    b->shell = true;
    kura_value *v = (kura_value *)pk.arr;
    val_pack_bytes(&pk, v, type, p, len);
    return v;
}

val_block *val_shell_of(const kura_value *v)
{
    if (v->type != KURA_S && v->type != KURA_B) return NULL;
    val_block *b = v->u.bytes.blk;
    return b && b->shell && (const uint8_t *)v == (const uint8_t *)b + VAL_BLOCK_HDR ? b : NULL;
}

void val_free_node(kura_value *v, val_block *shell)
{
    if (shell)
        val_block_release(shell);
    else
        free(v);
}

/* ---- val_copy ---------------------------------------------------------------------------- */

static void pack_measure(const kura_value *v, val_pack_size *sz)
{
    switch (v->type) {
    case KURA_S:
    case KURA_B:
        sz->str += (size_t)v->u.bytes.len + 1;
        sz->refs++;
        break;
    case KURA_M:
        if (v->u.map.n == 0) break;
        sz->arr += (size_t)v->u.map.n * sizeof(kura_attr);
        sz->refs++;
        for (uint32_t i = 0; i < v->u.map.n; i++) {
            sz->str += (size_t)v->u.map.a[i].name_len + 1;
            pack_measure(&v->u.map.a[i].value, sz);
        }
        break;
    case KURA_L:
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        if (v->u.list.n == 0) break;
        sz->arr += (size_t)v->u.list.n * sizeof(kura_value);
        sz->refs++;
        for (uint32_t i = 0; i < v->u.list.n; i++)
            pack_measure(&v->u.list.v[i], sz);
        break;
    default:
        break;
    }
}

static void pack_fill(val_pack *pk, kura_value *dst, const kura_value *src)
{
    switch (src->type) {
    case KURA_S:
    case KURA_B:
        val_pack_bytes(pk, dst, (kura_type)src->type, src->u.bytes.p, src->u.bytes.len);
        break;
    case KURA_M:
        if (src->u.map.n == 0) {
            val_init_container(dst, KURA_M);
        } else {
            kura_attr *a = val_pack_container(pk, dst, KURA_M, src->u.map.n);
            for (uint32_t i = 0; i < src->u.map.n; i++) {
                const kura_attr *sa = &src->u.map.a[i];
                val_pack_name(pk, &a[i], sa->name, sa->name_len);
                pack_fill(pk, &a[i].value, &sa->value);
            }
        }
        break;
    case KURA_L:
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        if (src->u.list.n == 0) {
            val_init_container(dst, (kura_type)src->type);
        } else {
            kura_value *e = val_pack_container(pk, dst, (kura_type)src->type, src->u.list.n);
            for (uint32_t i = 0; i < src->u.list.n; i++)
                pack_fill(pk, &e[i], &src->u.list.v[i]);
        }
        break;
    default: /* N, BOOL, NULL and empty values own no memory */
        *dst = *src;
        break;
    }
}

kura_status val_copy(kura_value *dst, const kura_value *src)
{
    if (src->type == KURA_S || src->type == KURA_B)
        return val_set_bytes(dst, (kura_type)src->type, src->u.bytes.p, src->u.bytes.len);
    val_pack_size sz = {0, 0, 0};
    pack_measure(src, &sz);
    val_pack pk = {NULL, NULL, NULL};
    if (sz.refs && !val_block_new(&sz, &pk)) {
        memset(dst, 0, sizeof *dst);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    pack_fill(&pk, dst, src);
    return KURA_OK;
}
