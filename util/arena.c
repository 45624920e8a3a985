/*
 * arena.c - bump allocation in blocks; large requests get a block of their own so the current
 * block's tail is not wasted.
 */
#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct arena_block {
    struct arena_block *next;
    size_t pad; /* keeps the payload 16-byte aligned */
} arena_block;

struct arena {
    size_t block_bytes;
    char *ptr;
    size_t left;
    arena_block *blocks;
    size_t usage; /* written by the owner, read by anyone: atomic */
};

arena *arena_new(size_t block_bytes)
{
    arena *a = calloc(1, sizeof *a);
    if (a)
        a->block_bytes = block_bytes ? block_bytes : 64 * 1024;
    return a;
}

void arena_free(arena *a)
{
    if (!a)
        return;
    for (arena_block *b = a->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

static char *new_block(arena *a, size_t n)
{
    arena_block *b = malloc(sizeof *b + n);
    if (!b)
        return NULL;
    b->next = a->blocks;
    a->blocks = b;
    __atomic_add_fetch(&a->usage, sizeof *b + n, __ATOMIC_RELAXED);
    return (char *)(b + 1);
}

void *arena_alloc(arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (n <= a->left) {
        void *p = a->ptr;
        a->ptr += n;
        a->left -= n;
        return p;
    }
    if (n > a->block_bytes / 4)
        return new_block(a, n);
    char *p = new_block(a, a->block_bytes);
    if (!p)
        return NULL;
    a->ptr = p + n;
    a->left = a->block_bytes - n;
    return p;
}

size_t arena_usage(const arena *a)
{
    return __atomic_load_n(&a->usage, __ATOMIC_RELAXED);
}
