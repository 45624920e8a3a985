/*
 * batch.c - building and walking write batches (format in batch.h / docs/format/wal.md).
 */
#include "engine/lsm/batch.h"

#include "util/ikey.h"
#include "util/status.h"

void lsm_batch_init(lsm_batch *b)
{
    b->rep = (kbuf)KBUF_INIT;
    lsm_batch_clear(b);
}

void lsm_batch_free(lsm_batch *b)
{
    kbuf_free(&b->rep);
}

void lsm_batch_clear(lsm_batch *b)
{
    b->rep.len = 0;
    if (kbuf_reserve(&b->rep, BATCH_HEADER)) {
        memset(b->rep.data, 0, BATCH_HEADER);
        b->rep.len = BATCH_HEADER;
    }
}

static kura_status add(lsm_batch *b, unsigned type, const void *key, size_t klen, const void *val,
                       size_t vlen)
{
    if (b->rep.len < BATCH_HEADER)
        return kura_err(KURA_E_NOMEM, "write batch: out of memory");
    size_t old = b->rep.len;
    bool ok = kbuf_put_u8(&b->rep, (uint8_t)type) && kbuf_put_lenbytes(&b->rep, key, klen);
    if (ok && type != IKEY_TYPE_DELETE && type != LSM_BATCH_TXN)
        ok = kbuf_put_lenbytes(&b->rep, val, vlen);
    if (!ok) {
        b->rep.len = old;
        return kura_err(KURA_E_NOMEM, "write batch: out of memory");
    }
    enc_fixed32(b->rep.data + 8, lsm_batch_count(b) + 1);
    return KURA_OK;
}

kura_status lsm_batch_put(lsm_batch *b, const void *key, size_t klen, const void *val,
                          size_t vlen)
{
    return add(b, IKEY_TYPE_VALUE, key, klen, val, vlen);
}

kura_status lsm_batch_delete(lsm_batch *b, const void *key, size_t klen)
{
    return add(b, IKEY_TYPE_DELETE, key, klen, NULL, 0);
}

kura_status lsm_batch_image(lsm_batch *b, const void *key, size_t klen, const void *val,
                            size_t vlen)
{
    return add(b, LSM_BATCH_IMAGE, key, klen, val, vlen);
}

kura_status lsm_batch_txn_marker(lsm_batch *b, uint64_t txn_id)
{
    if (lsm_batch_count(b) != 0)
        return kura_err(KURA_E_INVALID, "a transaction marker must be a batch's first entry");
    uint8_t key[8];
    enc_fixed64(key, txn_id);
    return add(b, LSM_BATCH_TXN, key, sizeof key, NULL, 0);
}

kura_status lsm_batch_meta(lsm_batch *b, uint64_t ms, uint8_t flags)
{
    uint8_t v[LSM_BATCH_META_BYTES];
    enc_fixed64(v, ms);
    v[8] = flags;
    return add(b, LSM_BATCH_META, "", 0, v, sizeof v);
}

bool lsm_rep_txn_id(const uint8_t *rep, size_t len, uint64_t *txn_id_out)
{
    if (len < BATCH_HEADER + 10 || lsm_rep_count(rep) == 0 || rep[BATCH_HEADER] != LSM_BATCH_TXN ||
        rep[BATCH_HEADER + 1] != 8)
        return false;
    *txn_id_out = dec_fixed64(rep + BATCH_HEADER + 2);
    return true;
}

kura_status lsm_rep_iterate(const uint8_t *rep, size_t len, lsm_batch_fn fn, void *arg,
                            const char *what)
{
    if (len < BATCH_HEADER)
        return kura_err(KURA_E_CORRUPTION, "%s: batch of %zu bytes is too short", what, len);
    uint64_t seq = lsm_rep_seq(rep);
    uint32_t count = lsm_rep_count(rep);
    const uint8_t *p = rep + BATCH_HEADER, *end = rep + len;
    for (uint32_t i = 0; i < count; i++) {
        if (p >= end)
            goto bad;
        unsigned type = *p++;
        uint64_t klen, vlen = 0;
        const uint8_t *key, *val = NULL;
        if (type != IKEY_TYPE_VALUE && type != IKEY_TYPE_DELETE && type != LSM_BATCH_IMAGE &&
            type != LSM_BATCH_TXN && type != LSM_BATCH_META)
            goto bad;
        if (type == LSM_BATCH_TXN && i != 0)
            goto bad; /* only a piece's first entry */
        if (!(p = dec_varint64(p, end, &klen)) || klen > (uint64_t)(end - p))
            goto bad;
        key = p;
        p += klen;
        if (type != IKEY_TYPE_DELETE && type != LSM_BATCH_TXN) {
            if (!(p = dec_varint64(p, end, &vlen)) || vlen > (uint64_t)(end - p))
                goto bad;
            val = p;
            p += vlen;
        }
        if (type == LSM_BATCH_META && (klen != 0 || vlen != LSM_BATCH_META_BYTES))
            goto bad;
        kura_status s = fn(arg, seq + i, type, key, klen, val, vlen);
        if (s != KURA_OK)
            return s;
    }
    if (p != end)
        goto bad;
    return KURA_OK;
bad:
    return kura_err(KURA_E_CORRUPTION, "%s: malformed write batch (%u entries declared)", what,
                    count);
}
