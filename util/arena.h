/*
 * arena.h - a bump allocator: many small allocations freed all at once.
 *
 * Used by the memtable. Allocation is not thread-safe (the memtable has one writer at a time);
 * the memory it hands out may be read by any thread. arena_usage() may be read concurrently.
 */
#ifndef KURA_UTIL_ARENA_H
#define KURA_UTIL_ARENA_H

#include <stddef.h>

typedef struct arena arena;

arena *arena_new(size_t block_bytes); /* NULL on allocation failure */
void arena_free(arena *a);            /* frees every allocation; NULL is a no-op */

/* Returns n bytes aligned to 8, or NULL on allocation failure. */
void *arena_alloc(arena *a, size_t n);

/* Bytes reserved from the system so far (approximate memory footprint). */
size_t arena_usage(const arena *a);

#endif
