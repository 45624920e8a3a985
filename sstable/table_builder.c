/*
 * table_builder.c - writing an SSTable front to back (docs/format/sstable.md).
 *
 * Entries go into the current data block; when it reaches block_size it is compressed (kept
 * only if that saves at least 12.5%), framed with its trailer and buffered for the file. The
 * index entry of a block is written only when the next key arrives, so that its separator can
 * be shortened to lie between the two blocks (LevelDB's pending_index_entry). Filters collect
 * one hash per distinct user key and per distinct routing prefix; because keys arrive sorted,
 * "distinct" only needs a comparison with the previous one.
 *
 * Output is buffered and appended in chunks of OUT_FLUSH_BYTES to keep syscalls few. Errors
 * are sticky: after a failed append or allocation the builder only reports the error.
 */
#include "sstable/table_builder.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sstable/block_builder.h"
#include "sstable/bloom.h"
#include "sstable/compress.h"
#include "sstable/format.h"
#include "sstable/props.h"
#include "util/crc32c.h"
#include "util/ikey.h"
#include "util/status.h"

enum { OUT_FLUSH_BYTES = 256 * 1024 };
#define MAX_ENTRY_BYTES ((size_t)1 << 30)
#define MAX_BLOCK_SIZE ((size_t)1 << 28)

struct sst_builder {
    io_env *env;
    io_file *file;
    char *path;
    sst_options o;
    kura_status err; /* sticky */
    uint64_t off;    /* file offset just past the bytes in `out` */
    kbuf out;        /* framed blocks not yet appended to the file */
    sst_block_builder data, index;
    kbuf last_key;    /* the last key added */
    kbuf sep;         /* scratch: index separators */
    kbuf cbuf;        /* scratch: compressed payloads, filter and properties bytes */
    kbuf last_prefix; /* the last routing prefix added to the prefix filter */
    bool have_prefix;
    bool pending_index; /* a block was flushed; its index entry awaits the next key */
    sst_handle pending;
    sst_bloom_builder keys, prefixes;
    sst_props props;
};

void sst_options_init(sst_options *o)
{
    o->block_size = 4096;
    o->restart_interval = 16;
    o->compression = KURA_COMPRESS_LZ4;
    o->bloom_bits_per_key = 10;
    o->prefix_len = NULL;
}

void sst_meta_clear(sst_meta *m)
{
    if (!m)
        return;
    kbuf_free(&m->smallest);
    kbuf_free(&m->largest);
    memset(m, 0, sizeof *m);
}

static void builder_free(sst_builder *b)
{
    io_close(b->file);
    sst_block_builder_free(&b->data);
    sst_block_builder_free(&b->index);
    kbuf_free(&b->out);
    kbuf_free(&b->last_key);
    kbuf_free(&b->sep);
    kbuf_free(&b->cbuf);
    kbuf_free(&b->last_prefix);
    sst_bloom_builder_free(&b->keys);
    sst_bloom_builder_free(&b->prefixes);
    sst_props_clear(&b->props);
    free(b->path);
    free(b);
}

kura_status sst_builder_new(io_env *env, const char *path, const sst_options *o,
                            sst_builder **b_out)
{
    sst_options opts;
    if (!o) {
        sst_options_init(&opts);
        o = &opts;
    }
    if (o->block_size == 0 || o->block_size > MAX_BLOCK_SIZE || o->restart_interval < 1 ||
        (unsigned)o->compression > KURA_COMPRESS_ZLIB)
        return kura_err(KURA_E_INVALID, "%s: invalid SSTable options", path);
    sst_builder *b = calloc(1, sizeof *b);
    if (!b || !(b->path = strdup(path))) {
        free(b);
        return kura_err(KURA_E_NOMEM, "%s: out of memory creating table", path);
    }
    b->env = io_env_or_default(env);
    b->o = *o;
    sst_block_builder_init(&b->data, o->restart_interval);
    sst_block_builder_init(&b->index, 1);
    sst_bloom_builder_init(&b->keys, o->bloom_bits_per_key);
    sst_bloom_builder_init(&b->prefixes, o->bloom_bits_per_key);
    sst_props_init(&b->props);
    kura_status s = io_open_write(b->env, path, IO_KIND_SST, &b->file);
    if (s != KURA_OK) {
        b->file = NULL;
        builder_free(b);
        return s;
    }
    *b_out = b;
    return KURA_OK;
}

static kura_status fail(sst_builder *b, kura_status s)
{
    b->err = s;
    return s;
}

static kura_status oom(sst_builder *b)
{
    return fail(b, kura_err(KURA_E_NOMEM, "%s: out of memory building table", b->path));
}

static kura_status flush_out(sst_builder *b)
{
    if (b->out.len == 0)
        return KURA_OK;
    kura_status s = io_append(b->file, b->out.data, b->out.len);
    kbuf_clear(&b->out);
    return s == KURA_OK ? KURA_OK : fail(b, s);
}

/* Frames payload[0..n) (compressed if allowed and worth it) into the output. */
static kura_status write_block(sst_builder *b, const uint8_t *payload, size_t n,
                               bool compress, sst_handle *h_out, bool *compressed_out)
{
    uint8_t type = SST_BLOCK_RAW;
    if (compress && b->o.compression != KURA_COMPRESS_NONE &&
        sst_compress(b->o.compression, payload, n, &b->cbuf) && b->cbuf.len <= n - n / 8) {
        payload = b->cbuf.data;
        n = b->cbuf.len;
        type = (uint8_t)b->o.compression;
    }
    if (!kbuf_reserve(&b->out, n + SST_BLOCK_TRAILER))
        return oom(b);
    h_out->off = b->off;
    h_out->size = n;
    uint32_t crc = crc32c_extend(crc32c(payload, n), &type, 1);
    kbuf_append(&b->out, payload, n);
    kbuf_put_u8(&b->out, type);
    kbuf_put_fixed32(&b->out, crc32c_mask(crc));
    b->off += n + SST_BLOCK_TRAILER;
    if (compressed_out)
        *compressed_out = type != SST_BLOCK_RAW;
    return b->out.len >= OUT_FLUSH_BYTES ? flush_out(b) : KURA_OK;
}

static kura_status flush_data_block(sst_builder *b)
{
    size_t n;
    const uint8_t *p = sst_block_builder_finish(&b->data, &n);
    if (!p)
        return oom(b);
    bool compressed = false;
    kura_status s = write_block(b, p, n, true, &b->pending, &compressed);
    if (s != KURA_OK)
        return s;
    b->props.data_blocks++;
    b->props.compressed_blocks += compressed;
    b->props.data_bytes += b->pending.size + SST_BLOCK_TRAILER;
    sst_block_builder_reset(&b->data);
    b->pending_index = true;
    return KURA_OK;
}

/*
 * Sets sep to an internal key k with last <= k < next (ikey order), shorter than last when
 * the user keys allow it (LevelDB's FindShortestSeparator): the user key cut after the first
 * byte that differs, that byte incremented, with the highest trailer so that k sorts before
 * every version of that user key. next == NULL (the last block): k = last.
 */
static bool make_separator(kbuf *sep, const uint8_t *last, size_t llen, const uint8_t *next,
                           size_t nlen)
{
    kbuf_clear(sep);
    if (next) {
        size_t ul = ikey_user_len(llen), un = ikey_user_len(nlen);
        size_t n = ul < un ? ul : un, i = 0;
        while (i < n && last[i] == next[i])
            i++;
        if (i < n && i + 1 < ul && last[i] < 0xff && last[i] + 1 < next[i]) {
            if (!kbuf_reserve(sep, i + 1 + IKEY_TRAILER))
                return false;
            kbuf_append(sep, last, i + 1);
            sep->data[i]++;
            return kbuf_put_fixed64(sep, ikey_pack(IKEY_MAX_SEQ, IKEY_TYPE_SEEK));
        }
    }
    return kbuf_append(sep, last, llen);
}

/* The index entry of the pending block, separating it from the block starting at next. */
static kura_status add_index_entry(sst_builder *b, const uint8_t *next, size_t nlen)
{
    uint8_t h[SST_HANDLE_MAX];
    size_t hlen = sst_handle_encode(h, b->pending);
    if (!make_separator(&b->sep, b->last_key.data, b->last_key.len, next, nlen) ||
        !sst_block_builder_add(&b->index, b->sep.data, b->sep.len, h, hlen))
        return oom(b);
    b->pending_index = false;
    return KURA_OK;
}

/* Adds the user key (and its routing prefix) to the filters if it differs from the last. */
static bool add_to_filters(sst_builder *b, const uint8_t *ikey, size_t iklen)
{
    size_t ulen = ikey_user_len(iklen);
    if (b->o.bloom_bits_per_key == 0)
        return true;
    if (b->props.entries > 0 &&
        ukey_cmp(ikey, ulen, b->last_key.data, ikey_user_len(b->last_key.len)) == 0)
        return true; /* another version of the same user key */
    if (!sst_bloom_builder_add(&b->keys, ikey, ulen))
        return false;
    if (!b->o.prefix_len)
        return true;
    size_t plen = b->o.prefix_len(ikey, ulen);
    if (plen > ulen)
        plen = ulen;
    if (plen == 0 ||
        (b->have_prefix && ukey_cmp(ikey, plen, b->last_prefix.data, b->last_prefix.len) == 0))
        return true;
    if (!sst_bloom_builder_add(&b->prefixes, ikey, plen))
        return false;
    kbuf_clear(&b->last_prefix);
    b->have_prefix = kbuf_append(&b->last_prefix, ikey, plen);
    return true; /* a failed copy only costs a duplicate hash later */
}

kura_status sst_builder_add(sst_builder *b, const uint8_t *ikey, size_t iklen,
                            const uint8_t *val, size_t vlen)
{
    if (b->err)
        return kura_err(b->err, "%s: table builder failed earlier", b->path);
    if (iklen < IKEY_TRAILER || iklen > MAX_ENTRY_BYTES || vlen > MAX_ENTRY_BYTES - iklen)
        return kura_err(KURA_E_INVALID, "%s: entry sizes %zu/%zu out of range", b->path, iklen,
                        vlen);
    if (b->props.entries > 0 &&
        ikey_cmp(ikey, iklen, b->last_key.data, b->last_key.len) <= 0) {
        assert(!"sst_builder_add: keys out of order");
        return kura_err(KURA_E_INVALID, "%s: key %llu added out of order", b->path,
                        (unsigned long long)b->props.entries);
    }
    kura_status s;
    if (b->pending_index && (s = add_index_entry(b, ikey, iklen)) != KURA_OK)
        return s;
    if (!add_to_filters(b, ikey, iklen) ||
        !sst_block_builder_add(&b->data, ikey, iklen, val, vlen))
        return oom(b);
    if (b->props.entries == 0 && !kbuf_append(&b->props.smallest, ikey, iklen))
        return oom(b);
    kbuf_clear(&b->last_key);
    if (!kbuf_append(&b->last_key, ikey, iklen))
        return oom(b);
    uint64_t seq = ikey_seq(ikey, iklen);
    if (b->props.entries == 0 || seq < b->props.min_seq)
        b->props.min_seq = seq;
    if (seq > b->props.max_seq)
        b->props.max_seq = seq;
    b->props.entries++;
    b->props.raw_key_bytes += iklen;
    b->props.raw_value_bytes += vlen;
    if (sst_block_builder_size(&b->data) >= b->o.block_size)
        return flush_data_block(b);
    return KURA_OK;
}

uint64_t sst_builder_file_size(const sst_builder *b)
{
    return b->off + (sst_block_builder_empty(&b->data) ? 0 : sst_block_builder_size(&b->data));
}

uint64_t sst_builder_entries(const sst_builder *b)
{
    return b->props.entries;
}

/* Writes the filter blocks (if any), filling their footer handles. */
static kura_status write_filters(sst_builder *b, sst_footer *f)
{
    if (b->o.bloom_bits_per_key == 0)
        return KURA_OK;
    kbuf_clear(&b->cbuf);
    if (!sst_bloom_builder_finish(&b->keys, &b->cbuf))
        return oom(b);
    kura_status s = write_block(b, b->cbuf.data, b->cbuf.len, false, &f->key_filter, NULL);
    if (s != KURA_OK || !b->o.prefix_len)
        return s;
    kbuf_clear(&b->cbuf);
    if (!sst_bloom_builder_finish(&b->prefixes, &b->cbuf))
        return oom(b);
    return write_block(b, b->cbuf.data, b->cbuf.len, false, &f->prefix_filter, NULL);
}

/* Everything after the last add: remaining data, filters, properties, index, footer. */
static kura_status write_tail(sst_builder *b)
{
    kura_status s;
    if (b->err)
        return kura_err(b->err, "%s: table builder failed earlier", b->path);
    if (!sst_block_builder_empty(&b->data) && (s = flush_data_block(b)) != KURA_OK)
        return s;
    if (b->pending_index && (s = add_index_entry(b, NULL, 0)) != KURA_OK)
        return s;
    sst_footer f;
    memset(&f, 0, sizeof f);
    f.version = SST_FORMAT_VERSION;
    if ((s = write_filters(b, &f)) != KURA_OK)
        return s;
    sst_props *p = &b->props;
    p->compression = (uint32_t)b->o.compression;
    p->bloom_bits_per_key = b->o.bloom_bits_per_key;
    p->format_version = SST_FORMAT_VERSION;
    if (p->entries > 0 && !kbuf_append(&p->largest, b->last_key.data, b->last_key.len))
        return oom(b);
    kbuf_clear(&b->cbuf);
    if (!sst_props_encode(p, &b->cbuf))
        return oom(b);
    if ((s = write_block(b, b->cbuf.data, b->cbuf.len, false, &f.props, NULL)) != KURA_OK)
        return s;
    size_t n;
    const uint8_t *idx = sst_block_builder_finish(&b->index, &n);
    if (!idx)
        return oom(b);
    if ((s = write_block(b, idx, n, true, &f.index, NULL)) != KURA_OK)
        return s;
    if (!kbuf_reserve(&b->out, SST_FOOTER_SIZE))
        return oom(b);
    sst_footer_encode(&f, b->out.data + b->out.len);
    b->out.len += SST_FOOTER_SIZE;
    b->off += SST_FOOTER_SIZE;
    return flush_out(b);
}

kura_status sst_builder_finish(sst_builder *b, sst_meta *meta_out)
{
    kura_status s = write_tail(b);
    if (s == KURA_OK)
        s = io_sync(b->file);
    kura_status cs = io_close(b->file);
    b->file = NULL;
    if (s == KURA_OK)
        s = cs;
    if (s == KURA_OK) {
        sst_meta m;
        m.file_size = b->off;
        m.entries = b->props.entries;
        m.min_seq = b->props.min_seq;
        m.max_seq = b->props.max_seq;
        m.smallest = b->props.smallest; /* moved: the props no longer own them */
        m.largest = b->props.largest;
        kbuf empty = KBUF_INIT;
        b->props.smallest = b->props.largest = empty;
        *meta_out = m;
    }
    builder_free(b);
    return s;
}

void sst_builder_abandon(sst_builder *b)
{
    if (b)
        builder_free(b);
}
