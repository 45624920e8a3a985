/*
 * arena.c - This file contains the arena a PartiQL statement lives in: the AST's nodes and
 * strings in chunks freed at once, and the attribute values of its literals and parameters,
 * which the arena frees with kura_value_free. Statements are small (8 KB of text at most): the
 * tree of a point read or write fits in the arena's inline bytes, so preparing it costs no
 * malloc; beyond them chunks of 4 KB follow (a larger request gets its own chunk).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/partiql/partiql.h"

struct pq_chunk {
    struct pq_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

#define PQ_CHUNK_BYTES 4096

void *pq_alloc(pq_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->chunks && PQ_ARENA_INLINE - a->inline_used >= n) {
        void *p = a->inline_bytes + a->inline_used;
        a->inline_used += n;
        memset(p, 0, n);
        return p;
    }
    struct pq_chunk *c = a->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > PQ_CHUNK_BYTES ? n : PQ_CHUNK_BYTES;
        if (!(c = malloc(sizeof *c + cap))) return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->chunks;
        a->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *pq_strdup(pq_arena *a, const char *s, size_t n)
{
    char *p = pq_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

bool pq_adopt(pq_arena *a, kura_value *v)
{
    if (!v) return false;
    if (!a->values) {
        a->values = a->inline_values;
        a->values_cap = sizeof a->inline_values / sizeof a->inline_values[0];
    }
    if (a->nvalues == a->values_cap) {
        size_t cap = a->values_cap * 2;
        kura_value **nv = malloc(cap * sizeof *nv);
        if (!nv) {
            kura_value_free(v);
            return false;
        }
        memcpy(nv, a->values, a->nvalues * sizeof *nv);
        if (a->values != a->inline_values) free(a->values);
        a->values = nv;
        a->values_cap = cap;
    }
    a->values[a->nvalues++] = v;
    return true;
}

void pq_arena_free(pq_arena *a)
{
    while (a->chunks) {
        struct pq_chunk *next = a->chunks->next;
        free(a->chunks);
        a->chunks = next;
    }
    for (size_t i = 0; i < a->nvalues; i++) kura_value_free(a->values[i]);
    if (a->values != a->inline_values) free(a->values);
    a->inline_used = 0;
    a->values = NULL;
    a->nvalues = a->values_cap = 0;
}
