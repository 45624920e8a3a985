/*
 * db_iter.h - the user's view of an LSM tree at a snapshot.
 *
 * This file contains the interface of the user-key iterator (LevelDB's DBIter): it turns an
 * iterator over internal keys (typically a merge_iter over memtables and levels) into one
 * over user keys as they were at sequence number `snapshot`:
 *  - entries with seq > snapshot are invisible;
 *  - of each user key only the newest visible version counts;
 *  - a key whose newest visible version is a deletion is skipped.
 * It moves forward and backward with direction changes anywhere.
 *
 * The resulting kv_iter: key() returns the USER key, value() its value; both are valid until
 * the next move or destroy. seek(key) takes a USER key and finds the first user key >= it.
 * status(): KURA_OK, the internal iterator's error, KURA_E_CORRUPTION if an internal key was
 * shorter than 8 bytes or had an unknown type, or KURA_E_NOMEM if copying a key or value
 * failed; in each case the iterator is invalid until the next seek.
 * One iterator belongs to one thread.
 */
#ifndef KURA_LSM_DB_ITER_H
#define KURA_LSM_DB_ITER_H

#include <stdint.h>

#include "util/iter.h"

/*
 * A user-key iterator over `internal` at `snapshot`. Takes ownership of `internal` (freed
 * with the result, and also when this call fails). cleanup(arg), if not NULL, runs once after
 * `internal` is freed, when the iterator is freed (or this call fails): the engine uses it to
 * release the memtables and version the internal iterator reads. Returns NULL only if memory
 * runs out.
 */
kv_iter *db_iter_new(kv_iter *internal, uint64_t snapshot, void (*cleanup)(void *arg),
                     void *arg);

#endif
