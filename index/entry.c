/*
 * entry.c - This file contains the entry keys of an index (docs/format/index.md): checking an
 * item's index key attributes as DynamoDB does, building the entry key of an item, and
 * parsing an entry key back into the index's and the table's key attributes.
 *
 *   entry key = hash64(enc(h1) .. enc(hN)) big-endian || enc(h1) .. enc(hN)
 *               || enc(r1) .. enc(rM) || enc(table_pk) [|| enc(table_sk)]
 *
 * The hash is computed exactly as key_build() computes a storage key's (engine/model/key.c):
 * key_hash() over the encoded HASH values, here all of them concatenated, so that an LSI
 * entry (N = 1, the table's partition key) has its base item's hash and lands in the same
 * partition. Each part is key_enc_value() of the value as its own type; the encodings are
 * prefix-free, so the concatenation compares part by part and parses without lengths.
 *
 * Messages of idx_check_item: the type mismatch is DynamoDB's as the service prints it (and
 * dynalite's db/index.js validateItem copies it); DynamoDB Local 1.25.1 cuts it short after
 * "Type mismatch for Index Key" and answers "Invalid attribute value type" for a set, list,
 * map, BOOL or NULL value. The empty-value message is DynamoDB Local 1.25.1's, checked on a
 * GSI hash key, a GSI with a B hash key and an LSI sort key.
 *
 * An index key is held to the sizes of a table's key, with the table's messages
 * (engine/model/key.c): the HASH attributes' S/B values together at most 2,048 bytes, the
 * RANGE ones at most 1,024 ("Aggregated size of all range keys"). A write that breaks them is
 * refused; an existing item that does is left out of an index being backfilled, as DynamoDB's
 * backfill leaves index key violations out (idx_indexable).
 */
#include "index/index_int.h"

#include <string.h>

kura_status idx_err_empty(const idx_def *d, const char *name, const kura_value *v)
{
    return kura_err(KURA_E_INVALID, IDX_MSG_EMPTY, v->type == KURA_S ? "string" : "binary", d->name,
                    name);
}

kura_status idx_check_attr(const idx_def *d, const idx_key_attr *ka, const kura_value *v)
{
    if (v->type != ka->type)
        return kura_err(KURA_E_INVALID,
                        "One or more parameter values were invalid: Type mismatch for Index Key "
                        "%s Expected: %s Actual: %s IndexName: %s",
                        ka->name, val_type_name(ka->type), val_type_name((kura_type)v->type),
                        d->name);
    if (ka->type != KURA_N && v->u.bytes.len == 0) return idx_err_empty(d, ka->name, v);
    return KURA_OK;
}

static const kura_value *idx_item_get(const kura_value *item, const char *name)
{
    return val_map_get(item, name, strlen(name));
}

/* DynamoDB checks the key attributes of one index in key-schema order, HASH before RANGE, and
 * each one for its type before its emptiness (DynamoDB Local 1.25.1: an empty HASH value is
 * reported before a RANGE value of the wrong type). */
enum { IDX_HASH_MAX_BYTES = 2048, IDX_RANGE_MAX_BYTES = 1024 };

static kura_status check_item(const idx_def *d, const kura_value *item, bool sizes)
{
    size_t bytes[2] = {0, 0}; /* HASH, RANGE */
    for (uint32_t i = 0; i < d->nhash + d->nrange; i++) {
        const idx_key_attr *ka = idx_key_at(d, i);
        const kura_value *v = idx_item_get(item, ka->name);
        kura_status st = v ? idx_check_attr(d, ka, v) : KURA_OK;
        if (st != KURA_OK) return st;
        if (v && v->type != KURA_N) bytes[i >= d->nhash] += v->u.bytes.len;
    }
    /* the values present are held to the sizes even when another key attribute is missing
     * (the item has no entry then), as each one's type is */
    if (!sizes)
        return KURA_OK;
    if (bytes[0] > IDX_HASH_MAX_BYTES)
        return kura_err(KURA_E_INVALID, "One or more parameter values were invalid: Size of "
                                        "hashkey has exceeded the maximum size limit of2048 bytes");
    if (bytes[1] > IDX_RANGE_MAX_BYTES)
        return kura_err(KURA_E_INVALID, "One or more parameter values were invalid: Aggregated "
                                        "size of all range keys has exceeded the size limit of "
                                        "1024 bytes");
    return KURA_OK;
}

kura_status idx_check_item(const idx_def *d, const kura_value *item)
{
    return check_item(d, item, true);
}

kura_status idx_check_item_types(const idx_def *d, const kura_value *item)
{
    return check_item(d, item, false);
}

/* Appends enc(v) after checking v against the key attribute (a programmer error when the
 * caller skipped idx_check_item, reported with the same message rather than mis-encoded). */
static kura_status idx_put_attr(const idx_def *d, const idx_key_attr *ka, const kura_value *v,
                                kbuf *out)
{
    kura_status st = idx_check_attr(d, ka, v);
    return st == KURA_OK ? key_enc_value(v, out) : st;
}

/* Appends enc() of the table key attribute `name`, which every item holds. */
static kura_status idx_put_table_attr(const idx_def *d, const kura_value *item, const char *name,
                                      kura_type type, kbuf *out)
{
    const kura_value *v = idx_item_get(item, name);
    if (v == NULL || v->type != type)
        return kura_err(KURA_E_INVALID,
                        "index %s: the item has no table key attribute %s of type %s", d->name,
                        name, val_type_name(type));
    return key_enc_value(v, out);
}

kura_status idx_entry_key(const idx_def *d, const key_schema *table, const kura_value *item,
                          kbuf *out, bool *present_out)
{
    const kura_value *vals[2 * IDX_MAX_KEY_ATTRS];
    uint32_t nkeys = d->nhash + d->nrange;
    /* Sparse: look every key attribute up before writing anything. */
    for (uint32_t i = 0; i < nkeys; i++) {
        const idx_key_attr *ka = idx_key_at(d, i);
        if ((vals[i] = idx_item_get(item, ka->name)) == NULL) {
            *present_out = false;
            return KURA_OK;
        }
    }
    size_t start = out->len;
    if (!kbuf_reserve(out, IDX_HASH_LEN)) return kura_err(KURA_E_NOMEM, "out of memory");
    out->len += IDX_HASH_LEN;
    kura_status st = KURA_OK;
    for (uint32_t i = 0; st == KURA_OK && i < nkeys; i++) {
        const idx_key_attr *ka = idx_key_at(d, i);
        st = idx_put_attr(d, ka, vals[i], out);
        if (st == KURA_OK && i + 1 == d->nhash) {
            size_t h = start + IDX_HASH_LEN;
            enc_fixed64_be(out->data + start, key_hash(out->data + h, out->len - h));
        }
    }
    if (st == KURA_OK) st = idx_put_table_attr(d, item, table->pk_name, table->pk_type, out);
    if (st == KURA_OK && table->sk_name)
        st = idx_put_table_attr(d, item, table->sk_name, table->sk_type, out);
    if (st != KURA_OK) {
        out->len = start;
        return st;
    }
    *present_out = true;
    return KURA_OK;
}

/* ---- Parsing ------------------------------------------------------------------------------- */

/* Decodes the part at *off as `name` of type `type` into map `dst`; a part that does not
 * decode is corruption, reported with the index, the attribute and the offset. */
static kura_status idx_parse_part(const idx_def *d, const uint8_t *key, size_t len, size_t *off,
                                  const char *name, kura_type type, kura_value *dst)
{
    kura_value v = {0};
    size_t used = 0;
    kura_status st = key_dec_value(key + *off, len - *off, type, &v, &used);
    if (st == KURA_E_NOMEM) return st;
    if (st != KURA_OK)
        return kura_err(KURA_E_CORRUPTION, "index %s: entry key: bad %s value of %s at byte %zu",
                        d->name, val_type_name(type), name, *off);
    *off += used;
    return val_map_put(dst, name, strlen(name), &v);
}

/* An attribute that is both an index and a table key attribute (an LSI's partition key, a
 * GSI keyed on a table key attribute) must decode to the same value in both parts. */
static kura_status idx_parse_agree(const idx_def *d, const kura_value *ik, const kura_value *tk,
                                   const char *name)
{
    const kura_value *a = idx_item_get(ik, name), *b = idx_item_get(tk, name);
    if (a == NULL || b == NULL || val_equal(a, b)) return KURA_OK;
    return kura_err(KURA_E_CORRUPTION,
                    "index %s: entry key: %s differs between the index key and the table key",
                    d->name, name);
}

kura_status idx_entry_parse(const idx_def *d, const key_schema *table, const uint8_t *key,
                            size_t len, kura_value *index_key_out, kura_value *table_key_out)
{
    kura_value ik, tk;
    size_t off = IDX_HASH_LEN;
    kura_status st = KURA_OK;
    if (len < IDX_HASH_LEN)
        return kura_err(KURA_E_CORRUPTION, "index %s: entry key: %zu bytes, shorter than its hash",
                        d->name, len);
    val_init_container(&ik, KURA_M);
    val_init_container(&tk, KURA_M);
    for (uint32_t i = 0; st == KURA_OK && i < d->nhash + d->nrange; i++) {
        const idx_key_attr *ka = idx_key_at(d, i);
        st = idx_parse_part(d, key, len, &off, ka->name, ka->type, &ik);
        if (st == KURA_OK && i + 1 == d->nhash &&
            dec_fixed64_be(key) != key_hash(key + IDX_HASH_LEN, off - IDX_HASH_LEN))
            st = kura_err(KURA_E_CORRUPTION,
                          "index %s: entry key: hash prefix does not match the HASH values",
                          d->name);
    }
    if (st == KURA_OK) st = idx_parse_part(d, key, len, &off, table->pk_name, table->pk_type, &tk);
    if (st == KURA_OK && table->sk_name)
        st = idx_parse_part(d, key, len, &off, table->sk_name, table->sk_type, &tk);
    if (st == KURA_OK && off != len)
        st = kura_err(KURA_E_CORRUPTION, "index %s: entry key: %zu trailing bytes", d->name,
                      len - off);
    if (st == KURA_OK) st = idx_parse_agree(d, &ik, &tk, table->pk_name);
    if (st == KURA_OK && table->sk_name) st = idx_parse_agree(d, &ik, &tk, table->sk_name);
    if (st != KURA_OK) {
        val_clear(&ik);
        val_clear(&tk);
        return st;
    }
    val_move(index_key_out, &ik);
    val_move(table_key_out, &tk);
    return KURA_OK;
}
