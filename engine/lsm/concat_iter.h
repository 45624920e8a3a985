/*
 * concat_iter.h - one iterator over a level of sorted, non-overlapping files.
 *
 * This file contains the interface of the concatenating iterator (LevelDB's TwoLevelIterator
 * over a version's file list): the files of a level L >= 1 are sorted by key and do not
 * overlap, so their entries in file order are in internal-key order. The iterator opens the
 * files lazily, one at a time (only the file it is positioned in is open), finds the file for
 * a seek by binary search over the files' largest keys, and moves across file boundaries
 * forward and backward.
 *
 * Errors: if a file's iterator becomes invalid with a non-OK status (it could not be opened,
 * or a block is corrupt), the concat iterator stops there: it becomes invalid and status()
 * returns that status. A later seek starts again.
 */
#ifndef KURA_LSM_CONCAT_ITER_H
#define KURA_LSM_CONCAT_ITER_H

#include <stddef.h>
#include <stdint.h>

#include "util/iter.h"

/*
 * An iterator over files 0..n-1 (sorted and non-overlapping; n may be 0). largest[i] /
 * largest_len[i] is file i's largest internal key; both arrays and the keys are borrowed and
 * must outlive the iterator. open_file(arg, i) returns a new iterator over file i that the
 * concat iterator owns and frees; it may return an iterator with an error status (or NULL,
 * taken as KURA_E_NOMEM). cleanup(arg), if not NULL, runs once when the iterator is freed,
 * and also when this call fails. Returns NULL only if memory runs out.
 */
kv_iter *concat_iter_new(size_t n, const uint8_t *const *largest, const size_t *largest_len,
                         kv_iter *(*open_file)(void *arg, size_t i), void *arg,
                         void (*cleanup)(void *arg));

#endif
