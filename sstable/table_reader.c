/*
 * table_reader.c - opening an SSTable and point lookups (docs/format/sstable.md).
 *
 * Open reads the footer, then the index, filters and properties, and checks them against
 * each other before the table is used: index entries must be strictly increasing and their
 * handles must tile the data region exactly (block i starts where block i-1 ends, the last
 * ends where the first meta block starts), and the properties must agree with the index. That
 * makes every later data-block read in-bounds without further checks.
 *
 * The index is decoded once into an array (separator keys copied into one buffer), so a
 * lookup is a binary search over memory: bloom probe, index search, one block read (usually
 * a cache hit), one block seek, no allocation unless the value is copied. The index and the
 * filters can be unloaded (a process going idle) and are then read and checked again, under
 * the reader's load_mu, by the next lookup or iterator.
 */
#include <stdlib.h>
#include <string.h>

#include "sstable/table_internal.h"
#include "util/ikey.h"
#include "util/status.h"

static kura_status corrupt(const sst_reader *r, uint64_t off, const char *what)
{
    return kura_err(KURA_E_CORRUPTION, "%s: %s at offset %llu", r->path, what,
                    (unsigned long long)off);
}

static kura_status nomem(const sst_reader *r)
{
    return kura_err(KURA_E_NOMEM, "%s: out of memory opening table", r->path);
}

/* Counts the index entries and their key bytes (first pass over the index block). */
static kura_status index_size(const sst_reader *r, sst_block_iter *it, sst_handle h,
                              size_t *n_out, size_t *keybytes_out)
{
    size_t n = 0, kb = 0;
    for (sst_block_iter_seek_first(it); sst_block_iter_valid(it); sst_block_iter_next(it)) {
        n++;
        kb += it->klen;
    }
    if (it->err != KURA_OK)
        return it->err == KURA_E_NOMEM ? nomem(r) : corrupt(r, h.off, "malformed index block");
    *n_out = n;
    *keybytes_out = kb;
    return KURA_OK;
}

/* Second pass: copies keys and handles, checking order and that handles tile [0, limit). */
static kura_status index_fill(sst_reader *r, sst_block_iter *it, sst_handle h, uint64_t limit)
{
    uint64_t expect_off = 0;
    size_t i = 0, koff = 0;
    for (sst_block_iter_seek_first(it); sst_block_iter_valid(it); sst_block_iter_next(it), i++) {
        size_t klen, vlen;
        const uint8_t *k = sst_block_iter_key(it, &klen);
        const uint8_t *v = sst_block_iter_value(it, &vlen);
        sst_index_entry *e = &r->index[i];
        if (sst_handle_decode(v, v + vlen, &e->h) != v + vlen || e->h.off != expect_off ||
            e->h.size > SST_MAX_BLOCK_BYTES || e->h.size + SST_BLOCK_TRAILER > limit - e->h.off)
            return corrupt(r, h.off, "bad block handle in index block");
        memcpy(r->index_keys + koff, k, klen);
        e->key = r->index_keys + koff;
        e->klen = klen;
        koff += klen;
        if (i > 0 && ikey_cmp(r->index[i - 1].key, r->index[i - 1].klen, k, klen) >= 0)
            return corrupt(r, h.off, "index keys out of order in index block");
        expect_off = e->h.off + e->h.size + SST_BLOCK_TRAILER;
    }
    if (expect_off != limit)
        return corrupt(r, h.off, "index does not cover the data blocks in index block");
    return KURA_OK;
}

/* Reads the index block at h; data blocks must exactly fill [0, data_limit). */
static kura_status read_index(sst_reader *r, sst_handle h, uint64_t data_limit)
{
    sst_blockmem *m;
    kura_status s = sst_read_contents(r->file, r->path, h, &m);
    if (s != KURA_OK)
        return s;
    sst_block b;
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    size_t n = 0, keybytes = 0;
    if (!sst_block_parse(&b, m->block.data, m->block.size)) {
        s = corrupt(r, h.off, "malformed index block");
        goto out;
    }
    sst_block_iter_set(&it, &b);
    if ((s = index_size(r, &it, h, &n, &keybytes)) != KURA_OK)
        goto out;
    r->index = malloc((n ? n : 1) * sizeof *r->index);
    r->index_keys = malloc(keybytes ? keybytes : 1);
    if (!r->index || !r->index_keys) {
        s = nomem(r);
        goto out;
    }
    r->nblocks = n;
    r->index_key_bytes = keybytes;
    s = index_fill(r, &it, h, data_limit);
out:
    sst_block_iter_destroy(&it);
    free(m);
    return s;
}

static kura_status read_filter(sst_reader *r, sst_handle h, sst_blockmem **mem_out,
                               sst_bloom *f_out, bool *has_out)
{
    if (h.size == 0)
        return KURA_OK; /* the table has no such filter */
    kura_status s = sst_read_contents(r->file, r->path, h, mem_out);
    if (s != KURA_OK)
        return s;
    if (!sst_bloom_parse(f_out, (*mem_out)->block.data, (*mem_out)->block.size))
        return corrupt(r, h.off, "malformed filter block");
    *has_out = true;
    return KURA_OK;
}

static kura_status read_props(sst_reader *r, sst_handle h)
{
    sst_blockmem *m;
    kura_status s = sst_read_contents(r->file, r->path, h, &m);
    if (s != KURA_OK)
        return s;
    s = sst_props_decode(m->block.data, m->block.size, r->path, h.off, &r->props);
    free(m);
    if (s == KURA_OK && r->props.data_blocks != r->nblocks)
        s = corrupt(r, h.off, "block count differing from the index in properties block");
    return s;
}

/* Where the data region ends: the first meta block present. */
static uint64_t data_limit(const sst_footer *f)
{
    uint64_t lim = f->props.off < f->index.off ? f->props.off : f->index.off;
    if (f->key_filter.size && f->key_filter.off < lim)
        lim = f->key_filter.off;
    if (f->prefix_filter.size && f->prefix_filter.off < lim)
        lim = f->prefix_filter.off;
    return lim;
}

/* Frees the index and filters (not the props and meta). */
static void free_loaded(sst_reader *r)
{
    free(r->index);
    free(r->index_keys);
    free(r->key_filter_mem);
    free(r->prefix_filter_mem);
    r->index = NULL;
    r->index_keys = NULL;
    r->key_filter_mem = r->prefix_filter_mem = NULL;
    r->nblocks = 0;
    r->has_key_filter = r->has_prefix_filter = false;
}

/* Reads the index and the filters the footer names; on failure nothing stays allocated.
 * The caller publishes them (publish_loaded) once every check has passed. */
static kura_status read_loaded(sst_reader *r)
{
    const sst_footer *f = &r->footer;
    kura_status s;
    if ((s = read_index(r, f->index, data_limit(f))) != KURA_OK ||
        (s = read_filter(r, f->key_filter, &r->key_filter_mem, &r->key_filter,
                         &r->has_key_filter)) != KURA_OK ||
        (s = read_filter(r, f->prefix_filter, &r->prefix_filter_mem, &r->prefix_filter,
                         &r->has_prefix_filter)) != KURA_OK)
        free_loaded(r);
    return s;
}

/* From here on lookups use the index and filters without load_mu. */
static void publish_loaded(sst_reader *r)
{
    size_t bytes = r->nblocks * sizeof *r->index + r->index_key_bytes;
    if (r->key_filter_mem)
        bytes += sizeof *r->key_filter_mem + r->key_filter_mem->block.size;
    if (r->prefix_filter_mem)
        bytes += sizeof *r->prefix_filter_mem + r->prefix_filter_mem->block.size;
    __atomic_store_n(&r->loaded_bytes, bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&r->loaded, true, __ATOMIC_RELEASE);
}

static kura_status open_table(sst_reader *r, uint64_t file_size)
{
    if (file_size < SST_FOOTER_SIZE)
        return corrupt(r, 0, "file too short for a footer");
    uint64_t foot_off = file_size - SST_FOOTER_SIZE;
    uint8_t buf[SST_FOOTER_SIZE];
    kura_status s;
    if ((s = io_read_exact(r->file, r->path, foot_off, buf, sizeof buf)) != KURA_OK ||
        (s = sst_footer_decode(buf, r->path, foot_off, &r->footer)) != KURA_OK ||
        (s = read_loaded(r)) != KURA_OK || (s = read_props(r, r->footer.props)) != KURA_OK)
        return s;
    sst_meta *m = &r->meta;
    m->file_size = file_size;
    m->entries = r->props.entries;
    m->min_seq = r->props.min_seq;
    m->max_seq = r->props.max_seq;
    if (!kbuf_append(&m->smallest, r->props.smallest.data, r->props.smallest.len) ||
        !kbuf_append(&m->largest, r->props.largest.data, r->props.largest.len))
        return nomem(r);
    publish_loaded(r);
    return KURA_OK;
}

kura_status sst_reader_load_slow(sst_reader *r)
{
    kmutex_lock(&r->load_mu);
    kura_status s = KURA_OK;
    if (!__atomic_load_n(&r->loaded, __ATOMIC_RELAXED)) {
        s = read_loaded(r);
        /* the file may have changed under us since open: the index must still agree */
        if (s == KURA_OK && r->props.data_blocks != r->nblocks) {
            free_loaded(r);
            s = corrupt(r, r->footer.props.off,
                        "block count differing from the index in properties block");
        }
        if (s == KURA_OK)
            publish_loaded(r);
    }
    kmutex_unlock(&r->load_mu);
    return s;
}

bool sst_reader_unload(sst_reader *r)
{
    kmutex_lock(&r->load_mu);
    bool was = __atomic_load_n(&r->loaded, __ATOMIC_RELAXED);
    if (was) {
        __atomic_store_n(&r->loaded, false, __ATOMIC_RELAXED);
        __atomic_store_n(&r->loaded_bytes, 0, __ATOMIC_RELAXED);
        free_loaded(r);
    }
    kmutex_unlock(&r->load_mu);
    return was;
}

size_t sst_reader_memory(const sst_reader *r)
{
    return __atomic_load_n(&r->loaded_bytes, __ATOMIC_RELAXED);
}

kura_status sst_reader_open(io_env *env, const char *path, uint64_t file_size,
                            block_cache *cache, sst_reader **r_out)
{
    sst_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return kura_err(KURA_E_NOMEM, "%s: out of memory opening table", path);
    }
    r->env = io_env_or_default(env);
    kmutex_init(&r->load_mu);
    sst_props_init(&r->props);
    kura_status s = io_open_read(r->env, path, IO_KIND_SST, &r->file);
    if (s != KURA_OK) {
        r->file = NULL;
        sst_reader_close(r);
        return s;
    }
    if ((s = open_table(r, file_size)) != KURA_OK) {
        sst_reader_close(r);
        return s;
    }
    r->cache = cache;
    r->cache_id = cache ? block_cache_new_id(cache) : 0;
    *r_out = r;
    return KURA_OK;
}

void sst_reader_close(sst_reader *r)
{
    if (!r)
        return;
    io_close(r->file);
    free_loaded(r);
    kmutex_destroy(&r->load_mu);
    sst_props_clear(&r->props);
    sst_meta_clear(&r->meta);
    free(r->path);
    free(r);
}

size_t sst_index_lower_bound(const sst_reader *r, const uint8_t *ikey, size_t iklen)
{
    size_t lo = 0, hi = r->nblocks; /* answer in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sst_index_entry *e = &r->index[mid];
        if (ikey_cmp(e->key, e->klen, ikey, iklen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

kura_status sst_reader_get(sst_reader *r, const uint8_t *ikey, size_t iklen, bool fill_cache,
                           kbuf *val_out, unsigned *type_out, bool *found_out)
{
    if (iklen < IKEY_TRAILER)
        return kura_err(KURA_E_INVALID, "%s: lookup key shorter than 8 bytes", r->path);
    kura_status s = sst_reader_load(r);
    if (s != KURA_OK)
        return s;
    size_t ulen = ikey_user_len(iklen);
    if (r->has_key_filter && !sst_bloom_may_contain(&r->key_filter, ikey, ulen)) {
        *found_out = false;
        return KURA_OK;
    }
    /* The block whose separator is >= ikey holds the first entry >= ikey, if any entry with
     * this user key does: the separator is < the next block's first key. */
    size_t bi = sst_index_lower_bound(r, ikey, iklen);
    if (bi == r->nblocks) {
        *found_out = false;
        return KURA_OK;
    }
    sst_block_ref ref;
    s = sst_reader_block(r, bi, fill_cache, &ref);
    if (s != KURA_OK)
        return s;
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    sst_block_iter_set(&it, ref.block);
    sst_block_iter_seek(&it, ikey, iklen);
    bool found = false;
    if (it.err != KURA_OK) {
        s = sst_block_error(r, bi, it.err);
    } else if (sst_block_iter_valid(&it)) {
        size_t klen, vlen;
        const uint8_t *k = sst_block_iter_key(&it, &klen);
        if (ukey_cmp(k, ikey_user_len(klen), ikey, ulen) == 0) {
            unsigned type = ikey_type(k, klen);
            const uint8_t *v = sst_block_iter_value(&it, &vlen);
            if (type == IKEY_TYPE_VALUE && val_out) {
                kbuf_clear(val_out);
                if (!kbuf_append(val_out, v, vlen))
                    s = kura_err(KURA_E_NOMEM, "%s: out of memory copying a value", r->path);
            }
            found = true;
            if (s == KURA_OK)
                *type_out = type;
        }
    }
    sst_block_iter_destroy(&it);
    sst_block_ref_release(r, &ref);
    if (s == KURA_OK)
        *found_out = found;
    return s;
}

/* A table whose filters cannot be read again may contain anything: the lookup or iterator
 * that follows reports the error. */
bool sst_reader_may_contain_prefix(sst_reader *r, const uint8_t *prefix, size_t len)
{
    return sst_reader_load(r) != KURA_OK || !r->has_prefix_filter ||
           sst_bloom_may_contain(&r->prefix_filter, prefix, len);
}

bool sst_reader_may_contain_key(sst_reader *r, const uint8_t *ukey, size_t len)
{
    return sst_reader_load(r) != KURA_OK || !r->has_key_filter ||
           sst_bloom_may_contain(&r->key_filter, ukey, len);
}

const sst_meta *sst_reader_meta(const sst_reader *r)
{
    return &r->meta;
}

const sst_props *sst_reader_props(const sst_reader *r)
{
    return &r->props;
}
