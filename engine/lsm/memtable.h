/*
 * memtable.h - the in-memory write buffer of one LSM tree: a skiplist of internal keys.
 *
 * This file contains the interface of the memtable: a LevelDB-style skiplist whose entries
 * (internal key, value) live in an arena and are never removed until the whole memtable is
 * freed. Keys are internal keys (util/ikey.h): `user_key || fixed64(seq << 8 | type)`,
 * ordered by user key ascending, then sequence number descending.
 *
 * Thread safety: one writer at a time (the caller serialises mt_add(), e.g. under the
 * partition's write lock or group-commit leader); any number of readers (mt_get, mt_iter,
 * mt_usage, mt_entries) at the same time as the writer, without locks. A reader sees every
 * entry whose mt_add() returned before the reader started its lookup, and possibly some that
 * are being added concurrently; never a half-built entry.
 *
 * Lifetime: a memtable is reference counted. mt_new() returns it with one reference; each
 * holder calls mt_unref() once; the last unref frees it and every pointer into it.
 */
#ifndef KURA_LSM_MEMTABLE_H
#define KURA_LSM_MEMTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"
#include "util/iter.h"

typedef struct memtable memtable;

/* A new empty memtable with a reference count of 1, or NULL if memory runs out. */
memtable *mt_new(void);
/* As mt_new, with the point-lookup bloom filter sized for about expected_bytes of entries
 * (~10 bits per entry up to 4 MiB of filter); mt_new() sizes it for a small memtable. */
memtable *mt_new_sized(size_t expected_bytes);

/* Takes / drops a reference. Both are thread-safe. The last mt_unref() frees the memtable;
 * mt_unref(NULL) is a no-op. */
void mt_ref(memtable *m);
void mt_unref(memtable *m);

/*
 * Adds the entry key@seq of `type` (IKEY_TYPE_VALUE or IKEY_TYPE_DELETE; the value is ignored
 * for deletes). key and val are copied. seq must be <= IKEY_MAX_SEQ, and key@seq must not be
 * in the memtable already (sequence numbers are never reused).
 * Not thread-safe with other mt_add() calls on the same memtable: the caller serialises
 * writers. Concurrent readers are fine.
 * Errors: KURA_E_NOMEM (the memtable is unchanged).
 */
kura_status mt_add(memtable *m, uint64_t seq, unsigned type, const uint8_t *key, size_t klen,
                   const uint8_t *val, size_t vlen);

/*
 * Looks up the newest entry for user key `key` with seq <= snapshot, without copying: returns
 * true if there is one, with *type_out = IKEY_TYPE_VALUE or IKEY_TYPE_DELETE, and for VALUE
 * *val_out / *vlen_out pointing at the value inside the memtable (valid while the caller
 * holds a reference to the memtable). Returns false, outputs untouched, if the memtable has
 * no visible version of the key. Never fails. Thread-safe.
 */
bool mt_get_ref(memtable *m, const uint8_t *key, size_t klen, uint64_t snapshot,
                const uint8_t **val_out, size_t *vlen_out, unsigned *type_out);

/* The type mt_get() reports when the value could not be copied for lack of memory. */
#define MT_TYPE_NOMEM 0xffu

/*
 * As mt_get_ref(), but for VALUE the value is copied into val_out (replacing its contents;
 * val_out is untouched for DELETE). If the copy fails for lack of memory, returns true with
 * *type_out = MT_TYPE_NOMEM and val_out unchanged (the message is in kura_last_error()); the
 * read path should prefer mt_get_ref() and copy where it can report KURA_E_NOMEM.
 */
bool mt_get(memtable *m, const uint8_t *key, size_t klen, uint64_t snapshot, kbuf *val_out,
            unsigned *type_out);

/*
 * A new iterator over the memtable's internal keys in ikey order (seek takes an internal
 * key of at least 8 bytes). Returns NULL if memory runs out. The iterator does NOT hold a
 * reference: the caller keeps the memtable referenced until kv_iter_free(). Keys and values
 * point into the memtable and stay valid as long as it is referenced, even after the
 * iterator moves. Entries added after the iterator was created may or may not be seen.
 * status() is always KURA_OK. One iterator belongs to one thread.
 */
kv_iter *mt_iter(memtable *m);

/* Bytes of memory the memtable holds (its arena). Readable from any thread at any time. */
size_t mt_usage(const memtable *m);

/* Number of entries added so far. Readable from any thread at any time. */
uint64_t mt_entries(const memtable *m);

#endif
