/*
 * merge_iter.h - one sorted view over several sorted internal-key iterators.
 *
 * This file contains the interface of the merging iterator (LevelDB's MergingIterator): it
 * yields the union of its children's entries in internal-key order (ikey_cmp), forward and
 * backward, with direction changes at any point. It is the iterator the engine puts over
 * the memtables, the L0 files and one concat_iter per deeper level.
 *
 * Equal keys: entries that compare equal in different children (which an LSM does not
 * produce: every sequence number is written once) are all yielded, ordered by child index
 * (lower first) going forward and in exactly the reverse order going backward.
 *
 * Errors: when a child becomes invalid with a non-OK status, the merge stops (becomes
 * invalid) and status() returns that child's status; status() otherwise returns the first
 * non-OK status among the children. A child key shorter than 8 bytes (no internal-key
 * trailer) stops the merge the same way with KURA_E_CORRUPTION. A later seek starts again.
 */
#ifndef KURA_LSM_MERGE_ITER_H
#define KURA_LSM_MERGE_ITER_H

#include <stddef.h>

#include "util/iter.h"

/*
 * A merging iterator over children[0..n-1]. Takes ownership of every child (they are freed
 * by kv_iter_free() of the result, and also when this call fails); the array itself is
 * borrowed (copied). n == 0 gives an empty iterator; n == 1 returns children[0] itself.
 * Returns NULL only if memory runs out (the children are freed).
 * Children must not be NULL.
 */
kv_iter *merge_iter_new(kv_iter **children, size_t n);

#endif
