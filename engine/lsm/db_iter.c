/*
 * db_iter.c - the user-key iterator at a snapshot (after LevelDB's db/db_iter.cc).
 *
 * This file contains the iterator that hides versions: of the internal entries (user key
 * ascending, newest version first), it yields for each user key the newest version with
 * seq <= snapshot, unless that version is a deletion.
 *
 * Forward (dir > 0): the internal iterator sits on the newest visible entry of the current
 * user key; key() and value() read through to it. `saved_key` is scratch space: while
 * scanning, the user key whose older versions must be skipped.
 *
 * Backward (dir < 0): the internal iterator sits just BEFORE all entries of the current user
 * key (on the previous user key's entries, or invalid), because finding the newest visible
 * version going backward means reading all of a key's versions, oldest first. The current
 * user key and value are therefore copied to `saved_key` / `saved_value`.
 *
 * Both buffers are reused across moves, so steady-state iteration does not allocate.
 */
#include "engine/lsm/db_iter.h"

#include <stdbool.h>
#include <stdlib.h>

#include "util/buf.h"
#include "util/ikey.h"
#include "util/status.h"

enum { DB_ITER_KEEP_VALUE_CAP = 1 << 20 }; /* larger saved-value buffers are released */

typedef struct db_iter {
    kv_iter base;
    kv_iter *in; /* internal keys */
    uint64_t snapshot;
    void (*cleanup)(void *arg);
    void *arg;
    int dir; /* +1 forward, -1 backward */
    bool valid;
    kura_status err; /* our own failure (corruption, memory); invalid until the next seek */
    kbuf saved_key;
    kbuf saved_value;
} db_iter;

typedef struct parsed_ikey {
    const uint8_t *ukey;
    size_t uklen;
    uint64_t seq;
    unsigned type;
} parsed_ikey;

static void clear_saved_value(db_iter *di)
{
    if (di->saved_value.cap > DB_ITER_KEEP_VALUE_CAP)
        kbuf_free(&di->saved_value);
    else
        kbuf_clear(&di->saved_value);
}

/* Makes the iterator invalid with status s (which has its message recorded already). */
static void fail(db_iter *di, kura_status s)
{
    di->err = s;
    di->valid = false;
    kbuf_clear(&di->saved_key);
    clear_saved_value(di);
}

/* Copies p[0..n) into b. b->data is never NULL afterwards, even for n == 0, so key() and
 * value() never return NULL for an empty key or value. */
static bool save(db_iter *di, kbuf *b, const uint8_t *p, size_t n)
{
    kbuf_clear(b);
    if (kbuf_reserve(b, n ? n : 1) && kbuf_append(b, p, n))
        return true;
    fail(di, kura_err(KURA_E_NOMEM, "iterator: out of memory saving %zu bytes", n));
    return false;
}

/* Decodes the internal iterator's current key; on corruption fails the iterator. */
static bool parse_current(db_iter *di, parsed_ikey *out)
{
    size_t iklen;
    const uint8_t *ik = kv_iter_key(di->in, &iklen);
    if (iklen < IKEY_TRAILER) {
        fail(di, kura_err(KURA_E_CORRUPTION, "iterator: internal key of %zu bytes", iklen));
        return false;
    }
    uint64_t trailer = ikey_trailer(ik, iklen);
    unsigned type = (unsigned)(trailer & 0xff);
    if (type != IKEY_TYPE_VALUE && type != IKEY_TYPE_DELETE) {
        fail(di, kura_err(KURA_E_CORRUPTION, "iterator: internal key of unknown type %u",
                          type));
        return false;
    }
    *out = (parsed_ikey){ik, iklen - IKEY_TRAILER, trailer >> 8, type};
    return true;
}

/*
 * Forward: from the internal iterator's position, finds the first visible user entry. With
 * `skipping`, versions of user keys <= saved_key are hidden (an entry for saved_key was
 * already returned or deleted).
 */
static void find_next_user_entry(db_iter *di, bool skipping)
{
    parsed_ikey k;
    do {
        if (!parse_current(di, &k))
            return;
        if (k.seq <= di->snapshot) {
            if (k.type == IKEY_TYPE_DELETE) {
                /* hide this key's older versions */
                if (!save(di, &di->saved_key, k.ukey, k.uklen))
                    return;
                skipping = true;
            } else if (!skipping ||
                       ukey_cmp(k.ukey, k.uklen, di->saved_key.data, di->saved_key.len) > 0) {
                di->valid = true;
                kbuf_clear(&di->saved_key);
                return;
            }
        }
        kv_iter_next(di->in);
    } while (kv_iter_valid(di->in));
    kbuf_clear(&di->saved_key);
    di->valid = false;
}

/*
 * Backward: scans entries backward until it has seen every version of the user key before
 * the position, keeping the newest visible one in saved_key/saved_value. Ends with the
 * internal iterator before that key's entries.
 */
static void find_prev_user_entry(db_iter *di)
{
    unsigned vtype = IKEY_TYPE_DELETE;
    parsed_ikey k;
    while (kv_iter_valid(di->in)) {
        if (!parse_current(di, &k))
            return;
        if (k.seq <= di->snapshot) {
            if (vtype != IKEY_TYPE_DELETE &&
                ukey_cmp(k.ukey, k.uklen, di->saved_key.data, di->saved_key.len) < 0)
                break; /* an entry of the previous user key: saved_key is complete */
            vtype = k.type;
            if (vtype == IKEY_TYPE_DELETE) {
                kbuf_clear(&di->saved_key);
                clear_saved_value(di);
            } else {
                size_t vlen;
                const uint8_t *v = kv_iter_value(di->in, &vlen);
                if (!save(di, &di->saved_value, v, vlen) ||
                    !save(di, &di->saved_key, k.ukey, k.uklen))
                    return;
            }
        }
        kv_iter_prev(di->in);
    }
    if (!kv_iter_valid(di->in) && kv_iter_status(di->in) != KURA_OK) {
        fail(di, kv_iter_status(di->in)); /* newer versions may be in what failed */
        return;
    }
    if (vtype == IKEY_TYPE_DELETE) {
        di->valid = false;
        kbuf_clear(&di->saved_key);
        clear_saved_value(di);
        di->dir = 1;
    } else {
        di->valid = true;
    }
}

static void di_next(kv_iter *it)
{
    db_iter *di = (db_iter *)it;
    if (di->dir < 0) {
        /* The internal iterator is just before the current key's entries (or invalid at the
         * start): step into them; saved_key already names the key to skip. */
        di->dir = 1;
        if (!kv_iter_valid(di->in))
            kv_iter_seek_first(di->in);
        else
            kv_iter_next(di->in);
    } else {
        size_t iklen;
        const uint8_t *ik = kv_iter_key(di->in, &iklen);
        if (!save(di, &di->saved_key, ik, iklen - IKEY_TRAILER))
            return;
        kv_iter_next(di->in);
    }
    if (!kv_iter_valid(di->in)) {
        di->valid = false;
        kbuf_clear(&di->saved_key);
        return;
    }
    find_next_user_entry(di, true);
}

static void di_prev(kv_iter *it)
{
    db_iter *di = (db_iter *)it;
    if (di->dir > 0) {
        /* Move the internal iterator before every entry of the current user key. */
        size_t iklen;
        const uint8_t *ik = kv_iter_key(di->in, &iklen);
        if (!save(di, &di->saved_key, ik, iklen - IKEY_TRAILER))
            return;
        for (;;) {
            kv_iter_prev(di->in);
            if (!kv_iter_valid(di->in)) {
                di->valid = false;
                kbuf_clear(&di->saved_key);
                clear_saved_value(di);
                return;
            }
            parsed_ikey k;
            if (!parse_current(di, &k))
                return;
            if (ukey_cmp(k.ukey, k.uklen, di->saved_key.data, di->saved_key.len) < 0)
                break;
        }
        di->dir = -1;
    }
    find_prev_user_entry(di);
}

static void di_seek_first(kv_iter *it)
{
    db_iter *di = (db_iter *)it;
    di->err = KURA_OK;
    di->dir = 1;
    clear_saved_value(di);
    kv_iter_seek_first(di->in);
    if (kv_iter_valid(di->in))
        find_next_user_entry(di, false);
    else
        di->valid = false;
}

static void di_seek_last(kv_iter *it)
{
    db_iter *di = (db_iter *)it;
    di->err = KURA_OK;
    di->dir = -1;
    clear_saved_value(di);
    kv_iter_seek_last(di->in);
    find_prev_user_entry(di);
}

static void di_seek(kv_iter *it, const uint8_t *key, size_t klen)
{
    db_iter *di = (db_iter *)it;
    di->err = KURA_OK;
    di->dir = 1;
    clear_saved_value(di);
    kbuf_clear(&di->saved_key);
    if (!kbuf_reserve(&di->saved_key, klen + IKEY_TRAILER)) {
        fail(di, kura_err(KURA_E_NOMEM, "iterator: out of memory seeking a %zu-byte key",
                          klen));
        return;
    }
    ikey_encode(di->saved_key.data, key, klen, di->snapshot, IKEY_TYPE_SEEK);
    di->saved_key.len = klen + IKEY_TRAILER;
    kv_iter_seek(di->in, di->saved_key.data, di->saved_key.len);
    if (kv_iter_valid(di->in))
        find_next_user_entry(di, false);
    else
        di->valid = false;
}

static bool di_valid(const kv_iter *it)
{
    return ((const db_iter *)it)->valid;
}

static const uint8_t *di_key(const kv_iter *it, size_t *klen_out)
{
    const db_iter *di = (const db_iter *)it;
    if (di->dir < 0) {
        *klen_out = di->saved_key.len;
        return di->saved_key.data;
    }
    size_t iklen;
    const uint8_t *ik = kv_iter_key(di->in, &iklen);
    *klen_out = iklen - IKEY_TRAILER;
    return ik;
}

static const uint8_t *di_value(const kv_iter *it, size_t *vlen_out)
{
    const db_iter *di = (const db_iter *)it;
    if (di->dir < 0) {
        *vlen_out = di->saved_value.len;
        return di->saved_value.data;
    }
    return kv_iter_value(di->in, vlen_out);
}

static kura_status di_status(const kv_iter *it)
{
    const db_iter *di = (const db_iter *)it;
    return di->err != KURA_OK ? di->err : kv_iter_status(di->in);
}

static void di_destroy(kv_iter *it)
{
    db_iter *di = (db_iter *)it;
    kv_iter_free(di->in);
    if (di->cleanup)
        di->cleanup(di->arg);
    kbuf_free(&di->saved_key);
    kbuf_free(&di->saved_value);
    free(di);
}

static const kv_iter_ops db_iter_ops = {
    di_valid, di_seek_first, di_seek_last, di_seek,   di_next,
    di_prev,  di_key,        di_value,     di_status, di_destroy,
};

kv_iter *db_iter_new(kv_iter *internal, uint64_t snapshot, void (*cleanup)(void *arg),
                     void *arg)
{
    db_iter *di = malloc(sizeof *di);
    if (!di) {
        kv_iter_free(internal);
        if (cleanup)
            cleanup(arg);
        return NULL;
    }
    *di = (db_iter){
        .base.ops = &db_iter_ops,
        .in = internal,
        .snapshot = snapshot > IKEY_MAX_SEQ ? IKEY_MAX_SEQ : snapshot,
        .cleanup = cleanup,
        .arg = arg,
        .dir = 1,
        .valid = false,
        .err = KURA_OK,
        .saved_key = KBUF_INIT,
        .saved_value = KBUF_INIT,
    };
    return &di->base;
}
