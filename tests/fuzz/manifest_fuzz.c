/*
 * manifest_fuzz.c - libFuzzer target: MANIFEST version edits and WAL batch records.
 *
 * This file contains a fuzz target for the two record payloads recovery decodes from logs:
 *   - edit_decode (engine/lsm/version_edit.h): on any bytes it must return OK or
 *     CORRUPTION (or NOMEM); an edit it accepts must survive encode -> decode unchanged,
 *     and re-encoding the decoded copy must give the same bytes;
 *   - lsm_rep_iterate (engine/lsm/batch.h): every key and value it hands out must lie
 *     inside the input, with sequence numbers counting up from the header's, and a
 *     transaction marker only first, without a value; lsm_rep_txn_id reads inside it.
 * Seeds: make_seeds.c (an encoded edit and an encoded batch).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/lsm/batch.h"
#include "engine/lsm/version_edit.h"
#include "tests/fuzz/fuzz_common.h"
#include "util/ikey.h"

static int kbuf_eq(const kbuf *a, const kbuf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* Aborts unless the two edits record the same change. */
static void edit_fuzz_compare(const version_edit *a, const version_edit *b)
{
    if (a->has_log_number != b->has_log_number || a->has_next_file != b->has_next_file ||
        a->has_last_seq != b->has_last_seq || a->nadded != b->nadded ||
        a->ndeleted != b->ndeleted || a->nwal_ends != b->nwal_ends)
        abort();
    if ((a->has_log_number && a->log_number != b->log_number) ||
        (a->has_next_file && a->next_file != b->next_file) ||
        (a->has_last_seq && a->last_seq != b->last_seq))
        abort();
    for (size_t i = 0; i < a->nadded; i++) {
        const edit_file *x = &a->added[i], *y = &b->added[i];
        if (x->level != y->level || x->number != y->number || x->file_size != y->file_size ||
            x->entries != y->entries || x->min_seq != y->min_seq || x->max_seq != y->max_seq ||
            !kbuf_eq(&x->smallest, &y->smallest) || !kbuf_eq(&x->largest, &y->largest))
            abort();
    }
    for (size_t i = 0; i < a->ndeleted; i++)
        if (a->deleted[i].level != b->deleted[i].level ||
            a->deleted[i].number != b->deleted[i].number)
            abort();
    for (size_t i = 0; i < a->nwal_ends; i++)
        if (a->wal_ends[i].number != b->wal_ends[i].number ||
            a->wal_ends[i].end != b->wal_ends[i].end)
            abort();
}

static void edit_fuzz(const uint8_t *data, size_t size)
{
    version_edit e1, e2;
    kbuf enc1 = {0}, enc2 = {0};
    kura_status s;

    edit_init(&e1);
    s = edit_decode(&e1, data, size, "fuzz input");
    FUZZ_CHECK(s, "edit_decode", KURA_OK, KURA_E_CORRUPTION, KURA_E_NOMEM);
    if (s == KURA_OK) {
        s = edit_encode(&e1, &enc1);
        FUZZ_CHECK(s, "edit_encode", KURA_OK, KURA_E_NOMEM);
    }
    if (s == KURA_OK) {
        edit_init(&e2);
        /* An empty edit encodes to nothing and kbuf leaves data NULL; edit_decode computes
         * p + len, which UBSan rejects for a NULL p even with len 0. */
        static const uint8_t none[1];
        s = edit_decode(&e2, enc1.data ? enc1.data : none, enc1.len, "re-encoded edit");
        FUZZ_CHECK(s, "edit_decode (round trip)", KURA_OK, KURA_E_NOMEM);
        if (s == KURA_OK) {
            edit_fuzz_compare(&e1, &e2);
            s = edit_encode(&e2, &enc2);
            FUZZ_CHECK(s, "edit_encode (round trip)", KURA_OK, KURA_E_NOMEM);
            if (s == KURA_OK && !kbuf_eq(&enc1, &enc2))
                abort();
        }
        edit_free(&e2);
    }
    kbuf_free(&enc1);
    kbuf_free(&enc2);
    edit_free(&e1);
}

typedef struct batch_fuzz_state {
    const uint8_t *begin, *end;
    uint64_t next_seq;
    uint64_t n;
} batch_fuzz_state;

static int batch_fuzz_inside(const batch_fuzz_state *st, const uint8_t *p, size_t len)
{
    if (len == 0)
        return 1;
    return p && p >= st->begin && p <= st->end && len <= (size_t)(st->end - p);
}

static kura_status batch_fuzz_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                                    size_t klen, const uint8_t *val, size_t vlen)
{
    batch_fuzz_state *st = arg;

    if (seq != st->next_seq ||
        (type != IKEY_TYPE_VALUE && type != IKEY_TYPE_DELETE && type != LSM_BATCH_IMAGE &&
         type != LSM_BATCH_TXN && type != LSM_BATCH_META) ||
        !batch_fuzz_inside(st, key, klen) || !batch_fuzz_inside(st, val, vlen))
        abort();
    /* a transaction's marker: the first entry only, a key and no value */
    if (type == LSM_BATCH_TXN && (st->n != 0 || vlen != 0 || val))
        abort();
    /* a meta entry: no key, its 9 bytes */
    if (type == LSM_BATCH_META && (klen != 0 || vlen != LSM_BATCH_META_BYTES))
        abort();
    st->next_seq++;
    st->n++;
    return KURA_OK;
}

static void batch_fuzz(const uint8_t *data, size_t size)
{
    batch_fuzz_state st = {data, data + size, 0, 0};
    kura_status s;

    if (size >= BATCH_HEADER)
        st.next_seq = lsm_rep_seq(data);
    s = lsm_rep_iterate(data, size, batch_fuzz_entry, &st, "fuzz batch");
    FUZZ_CHECK(s, "lsm_rep_iterate", KURA_OK, KURA_E_CORRUPTION);
    if (s == KURA_OK && size >= BATCH_HEADER && st.n != lsm_rep_count(data))
        abort();
    /* lsm_rep_txn_id reads the marker's id from inside the input, on any bytes */
    uint64_t id;
    if (lsm_rep_txn_id(data, size, &id) && size < BATCH_HEADER + 10)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    edit_fuzz(data, size);
    batch_fuzz(data, size);
    return 0;
}
