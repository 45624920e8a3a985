/*
 * collection.h - the cached sizes of a table's item collections (engine/ only; the table
 * side, which measures items and scans a collection, is engine/table_collection.c).
 *
 * An item collection is the set of items that share a partition key value. On a table with a
 * local secondary index DynamoDB reports its size (ReturnItemCollectionMetrics) and refuses a
 * write that would take it past 10 GB. Measuring it means reading every item of the
 * collection, so a coll_cache keeps the sizes of the collections used lately, keyed by any
 * byte string that names the collection (the table uses hash64(enc(pk)) || enc(pk), the
 * prefix of its items' storage keys):
 *
 *  - a write that needs the size (SIZE asked, or the write grows its item and the limit must
 *    be checked) and finds no entry fills one with one scan of the collection (the `fill`
 *    callback); every later write adds its delta (new size - old size of its item) to it;
 *  - a write that needs nothing and finds no entry costs a counter, nothing is scanned;
 *  - at most `max_entries` entries (and COLL_MAX_KEY_BYTES of keys): past that the least
 *    recently used idle entry is dropped, and a later write that needs it scans again.
 *
 * Exactness. The writes of one collection hold different item locks and run concurrently, so
 * a scan must neither miss a write that will not add its delta nor count one that will. Every
 * write registers before it writes and unregisters after (coll_begin / coll_end): on the
 * collection's entry when there is one, else in a cache-wide count of "bare" writes. A fill
 * marks its entry FILLING, which makes new writes of the collection wait, and makes new bare
 * writes of any collection register on an entry of their own (a stub) while fills are
 * pending; it then waits until the writes registered on its entry and the bare writes in
 * flight have finished, and scans. A write registered on a READY entry adds its delta at
 * coll_begin, under the cache's lock, after checking the limit there, so concurrent writes
 * can never take a collection past the limit together. The cached size is therefore exact
 * as long as every write of the table goes through coll_begin / coll_end and the write
 * either lands or fails cleanly; a write that fails after coll_begin takes its delta back and
 * drops the entry once idle (the next write that needs it scans again).
 *
 * Deadlock freedom: a write waits here (for a fill, or as a filler for the writes in flight)
 * holding no registration; the writes it waits for are between coll_begin and coll_end,
 * where nothing waits on the cache or on an item lock, and a fill's scan takes no lock. A
 * write of several items (a transaction, a Time to Live chunk) may wait in its first
 * coll_begin only: it registers the others with coll_try_begin, and when one would wait it
 * cancels what it registered (coll_cancel), waits with coll_settle, holding nothing, and
 * starts again. (Waiting while registered deadlocks: a fill waits for the bare writes in
 * flight, the waiting transaction's among them; crash_txn_index_test found it.)
 *
 * Thread safety: every function may be called from any thread; one mutex guards the cache.
 */
#ifndef KURA_ENGINE_COLLECTION_H
#define KURA_ENGINE_COLLECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

/* Entries per cache, by default (a table's); keys in all entries together at most this. */
enum { COLL_MAX_ENTRIES = 4096 };
#define COLL_MAX_KEY_BYTES ((size_t)1 << 20)

typedef struct coll_cache coll_cache;
struct coll_entry;

/* Measures a collection from the table (the items written so far): *size_out on success. */
typedef kura_status (*coll_fill_fn)(void *arg, uint64_t *size_out);

/* One write's registration, from coll_begin to coll_end. */
typedef struct coll_ticket {
    struct coll_entry *e; /* the entry the write registered on, or NULL */
    bool bare;            /* registered in the bare count instead */
    bool measured;        /* size_after is known (the entry is READY) */
    int64_t applied;      /* what the write added to the entry's size at coll_begin */
    uint64_t size_after;  /* the collection's size with this write */
} coll_ticket;

/* A new, empty cache of at most max_entries entries (0: COLL_MAX_ENTRIES); NULL when out of
 * memory. coll_cache_free(NULL) is a no-op; no write may be registered when it is freed. */
coll_cache *coll_cache_new(size_t max_entries);
void coll_cache_free(coll_cache *c);

/*
 * Registers a write of the collection `key` (borrowed for the call) whose item grows by
 * `delta` bytes (negative: shrinks). With `need`, the write wants the size: a missing entry
 * is filled first (fill(arg), called without the cache's lock; its failure is returned), and
 * a write with delta > 0 that would take the size past `limit` fails with
 * KURA_E_COLLECTION_SIZE ("Collection size exceeded") and registers nothing. Without `need`
 * the delta goes to the entry if there is one (then tk->measured too). On success the caller
 * writes and then calls coll_end, whatever the write's outcome. KURA_E_NOMEM.
 */
kura_status coll_begin(coll_cache *c, const uint8_t *key, size_t klen, int64_t delta, bool need,
                       uint64_t limit, coll_fill_fn fill, void *arg, coll_ticket *tk);
/* coll_begin that never waits: KURA_E_BUSY (no message, nothing registered) where coll_begin
 * would wait for a fill of the collection or fill it. */
kura_status coll_try_begin(coll_cache *c, const uint8_t *key, size_t klen, int64_t delta,
                           bool need, uint64_t limit, coll_fill_fn fill, void *arg,
                           coll_ticket *tk);
/* Waits until the collection `key` is not being filled and, with `need`, until it is
 * measured (filling it if no one does), registering nothing: what a write that got
 * KURA_E_BUSY from coll_try_begin does, holding no registration, before it tries again.
 * KURA_E_NOMEM, fill's error. */
kura_status coll_settle(coll_cache *c, const uint8_t *key, size_t klen, bool need,
                        coll_fill_fn fill, void *arg);
/* Ends the registration of a write that was not attempted: its delta goes back exactly (the
 * entry stays measured). A zeroed ticket is a no-op. */
void coll_cancel(coll_cache *c, coll_ticket *tk);
/* Ends the registration; `written`: whether the write happened (if not, its delta is taken
 * back). A zeroed ticket is a no-op. */
void coll_end(coll_cache *c, coll_ticket *tk, bool written);

/* The integrity check. coll_cache_keys appends the keys of the entries whose size is known
 * now to *keys_out (a caller's buffer) and their lengths to a malloc'ed *lens_out (caller
 * frees). coll_verify measures the collection `key` with fill() as a fill does (its new
 * writes wait, the ones registered finish first, so the measure and the cached size count
 * the same writes) and gives both; *present_out false: no size known for it now (nothing
 * measured). fill's failure is returned. KURA_E_NOMEM. */
kura_status coll_cache_keys(coll_cache *c, kbuf *keys_out, size_t **lens_out, size_t *n_out);
kura_status coll_verify(coll_cache *c, const uint8_t *key, size_t klen, coll_fill_fn fill,
                        void *arg, bool *present_out, uint64_t *cached_out,
                        uint64_t *measured_out);

/* Tests: the cached size of `key` (true), or false when it has no READY entry; and the number
 * of entries. */
bool coll_peek(coll_cache *c, const uint8_t *key, size_t klen, uint64_t *size_out);
size_t coll_cache_count(coll_cache *c);

/* A collection's key and cached size (coll_cache_largest). */
enum { COLL_SIZE_KEY_MAX = 2048 + 16 }; /* hash64 || enc(pk) of a 2,048-byte key, escaped */
typedef struct coll_size {
    uint64_t size;
    size_t klen;
    uint8_t key[COLL_SIZE_KEY_MAX];
} coll_size;

/* The n largest collections whose sizes the cache holds (READY entries), largest first, into
 * out[0..n); returns how many. Only the collections a write needed the size of are known
 * (see above): the largest of those, not necessarily of the table (the heat report's
 * "collections"). */
size_t coll_cache_largest(coll_cache *c, coll_size *out, size_t n);

#endif
