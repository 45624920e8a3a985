/*
 * props.c - encoding and decoding the properties block (docs/format/sstable.md section 5).
 *
 * One table describes every property (name, kind, where it lives in sst_props, whether it is
 * required), and both directions walk it, so the two can never disagree. The names in the
 * table are in byte order, which is the order they are written in.
 */
#include "sstable/props.h"

#include <stddef.h>
#include <string.h>

#include "sstable/block.h"
#include "sstable/block_builder.h"
#include "sstable/format.h"
#include "util/ikey.h"
#include "util/status.h"

typedef enum prop_kind { PROP_U64, PROP_U32, PROP_KEY } prop_kind;

typedef struct prop_desc {
    const char *name;
    prop_kind kind;
    size_t field; /* offsetof in sst_props */
    bool required;
} prop_desc;

#define PROP(name, kind, field, req) {name, kind, offsetof(sst_props, field), req}
static const prop_desc props_table[] = {
    PROP("bloom_bits_per_key", PROP_U32, bloom_bits_per_key, false),
    PROP("compressed_blocks", PROP_U64, compressed_blocks, false),
    PROP("compression", PROP_U32, compression, false),
    PROP("data_blocks", PROP_U64, data_blocks, true),
    PROP("data_bytes", PROP_U64, data_bytes, false),
    PROP("entries", PROP_U64, entries, true),
    PROP("format_version", PROP_U32, format_version, true),
    PROP("largest", PROP_KEY, largest, true),
    PROP("max_seq", PROP_U64, max_seq, true),
    PROP("min_seq", PROP_U64, min_seq, true),
    PROP("raw_key_bytes", PROP_U64, raw_key_bytes, false),
    PROP("raw_value_bytes", PROP_U64, raw_value_bytes, false),
    PROP("smallest", PROP_KEY, smallest, true),
};
#undef PROP
enum { NPROPS = sizeof props_table / sizeof props_table[0] };

void sst_props_init(sst_props *p)
{
    memset(p, 0, sizeof *p);
}

void sst_props_clear(sst_props *p)
{
    kbuf_free(&p->smallest);
    kbuf_free(&p->largest);
}

bool sst_props_encode(const sst_props *p, kbuf *out)
{
    sst_block_builder bb;
    sst_block_builder_init(&bb, 1);
    bool ok = true;
    for (size_t i = 0; i < NPROPS && ok; i++) {
        const prop_desc *d = &props_table[i];
        const char *field = (const char *)p + d->field;
        uint8_t num[VARINT64_MAX];
        const uint8_t *val = num;
        size_t vlen;
        if (d->kind == PROP_KEY) {
            const kbuf *k = (const kbuf *)(const void *)field;
            val = k->data;
            vlen = k->len;
        } else if (d->kind == PROP_U64) {
            uint64_t v;
            memcpy(&v, field, sizeof v);
            vlen = enc_varint64(num, v);
        } else {
            uint32_t v;
            memcpy(&v, field, sizeof v);
            vlen = enc_varint64(num, v);
        }
        ok = sst_block_builder_add(&bb, (const uint8_t *)d->name, strlen(d->name), val, vlen);
    }
    size_t len = 0;
    const uint8_t *bytes = ok ? sst_block_builder_finish(&bb, &len) : NULL;
    ok = bytes && kbuf_append(out, bytes, len);
    sst_block_builder_free(&bb);
    return ok;
}

static const prop_desc *find_prop(const uint8_t *name, size_t len, size_t *idx_out)
{
    for (size_t i = 0; i < NPROPS; i++) {
        if (strlen(props_table[i].name) == len && memcmp(props_table[i].name, name, len) == 0) {
            *idx_out = i;
            return &props_table[i];
        }
    }
    return NULL;
}

/* Stores one value into its field; false if it does not decode as its kind. */
static bool set_prop(sst_props *p, const prop_desc *d, const uint8_t *val, size_t vlen,
                     bool *oom)
{
    char *field = (char *)p + d->field;
    if (d->kind == PROP_KEY) {
        kbuf *k = (kbuf *)(void *)field;
        kbuf_clear(k);
        if (!kbuf_append(k, val, vlen))
            *oom = true;
        return !*oom;
    }
    uint64_t v = 0;
    if (dec_varint64(val, val + vlen, &v) != val + vlen)
        return false;
    if (d->kind == PROP_U64) {
        memcpy(field, &v, sizeof v);
        return true;
    }
    if (v > UINT32_MAX)
        return false;
    uint32_t v32 = (uint32_t)v;
    memcpy(field, &v32, sizeof v32);
    return true;
}

/* Values that cannot belong together. */
static const char *check_props(const sst_props *p)
{
    if (p->entries == 0)
        return p->smallest.len || p->largest.len || p->data_blocks ? "non-empty bounds of an "
                                                                     "empty table"
                                                                   : NULL;
    if (p->smallest.len < IKEY_TRAILER || p->largest.len < IKEY_TRAILER)
        return "smallest/largest key shorter than 8 bytes";
    if (ikey_cmp(p->smallest.data, p->smallest.len, p->largest.data, p->largest.len) > 0)
        return "smallest key above largest";
    if (p->min_seq > p->max_seq)
        return "min_seq above max_seq";
    if (p->data_blocks == 0 || p->data_blocks > p->entries)
        return "impossible data block count";
    return NULL;
}

kura_status sst_props_decode(const uint8_t *data, size_t len, const char *path, uint64_t off,
                             sst_props *p_out)
{
    unsigned long long o = (unsigned long long)off;
    sst_block blk;
    if (!sst_block_parse(&blk, data, len))
        return kura_err(KURA_E_CORRUPTION, "%s: malformed properties block at offset %llu", path,
                        o);
    sst_block_iter it;
    sst_block_iter_init(&it, 0);
    sst_block_iter_set(&it, &blk);
    uint32_t seen = 0;
    bool oom = false;
    const char *bad = NULL;
    for (sst_block_iter_seek_first(&it); sst_block_iter_valid(&it) && !bad;
         sst_block_iter_next(&it)) {
        size_t klen, vlen, idx;
        const uint8_t *k = sst_block_iter_key(&it, &klen);
        const uint8_t *v = sst_block_iter_value(&it, &vlen);
        const prop_desc *d = find_prop(k, klen, &idx);
        if (!d)
            continue; /* written by a newer kura: ignore */
        if (!set_prop(p_out, d, v, vlen, &oom))
            bad = oom ? "out of memory" : "malformed property value";
        seen |= 1u << idx;
    }
    kura_status s = it.err;
    sst_block_iter_destroy(&it);
    for (size_t i = 0; i < NPROPS && !bad && s == KURA_OK; i++)
        if (props_table[i].required && !(seen & (1u << i)))
            bad = "missing required property";
    if (!bad && s == KURA_OK)
        bad = check_props(p_out);
    if (!bad && s == KURA_OK && p_out->format_version != SST_FORMAT_VERSION)
        bad = "format version differs from the footer's";
    if (oom || s == KURA_E_NOMEM) {
        sst_props_clear(p_out);
        sst_props_init(p_out);
        return kura_err(KURA_E_NOMEM, "%s: out of memory reading properties", path);
    }
    if (bad || s != KURA_OK) {
        sst_props_clear(p_out);
        sst_props_init(p_out);
        return kura_err(KURA_E_CORRUPTION, "%s: %s in properties block at offset %llu", path,
                        bad ? bad : "malformed entry", o);
    }
    return KURA_OK;
}
