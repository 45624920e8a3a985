/*
 * table_verify.c - This file contains sst_reader_verify: every data block of an open table read
 * from the file (never from the block cache) with its checksum checked, its entries parsed,
 * and their keys checked against each other, the index and the table's properties
 * (docs/format/sstable.md section 7; `kura check`, engine/lsm/lsm_check.c).
 *
 * Opening the reader has already checked the footer, the index, the filters and the
 * properties. What is left is the data region: each block is read and checked on its own, so
 * a damaged block is reported (file and offset) and the next one is still read. Keys must
 * strictly increase across the whole table (ikey order), every key of block i must lie after
 * separator i-1 and at or before separator i, the first and last keys must be the properties'
 * smallest and largest, the entry count the properties' count, and the key filter must answer
 * "maybe" for every user key it was built from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sstable/table_internal.h"
#include "util/ikey.h"
#include "util/status.h"

typedef struct verify_ctx {
    sst_reader *r;
    sst_verify_fn fn;
    void *arg;
    sst_verify_stats *st;
    kbuf prev, first; /* the last key read so far, and the table's first key */
    bool have_prev, have_first;
} verify_ctx;

static void report(verify_ctx *c, uint64_t off, const char *what)
{
    char line[4400];
    snprintf(line, sizeof line, "%s: %s at offset %llu", c->r->path, what,
             (unsigned long long)off);
    c->st->problems++;
    c->fn(c->arg, line);
}

/* What is wrong with key k of block bi (against the previous key, the separators and the key
 * filter), or NULL. */
static const char *key_problem(const verify_ctx *c, size_t bi, const uint8_t *k, size_t klen)
{
    const sst_reader *r = c->r;
    const sst_index_entry *sep = &r->index[bi];
    if (c->have_prev && ikey_cmp(c->prev.data, c->prev.len, k, klen) >= 0)
        return "key not after the previous key in data block";
    if (ikey_cmp(k, klen, sep->key, sep->klen) > 0)
        return "key past its index separator in data block";
    if (bi > 0 && ikey_cmp(k, klen, r->index[bi - 1].key, r->index[bi - 1].klen) <= 0)
        return "key at or before the previous separator in data block";
    if (r->has_key_filter && !sst_bloom_may_contain(&r->key_filter, k, ikey_user_len(klen)))
        return "key missing from the key filter, for data block";
    return NULL;
}

/* Walks the entries of block bi, whose checksum matched. KURA_E_NOMEM, else KURA_OK (a bad
 * entry is reported). */
static kura_status verify_entries(verify_ctx *c, size_t bi, const sst_block *b)
{
    uint64_t off = c->r->index[bi].h.off, n = 0;
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    sst_block_iter_set(&it, b);
    const char *bad = NULL;
    kura_status s = KURA_OK;
    for (sst_block_iter_seek_first(&it); !bad && s == KURA_OK && sst_block_iter_valid(&it);
         sst_block_iter_next(&it)) {
        size_t klen;
        const uint8_t *k = sst_block_iter_key(&it, &klen);
        if ((bad = key_problem(c, bi, k, klen)) != NULL)
            break;
        c->prev.len = 0;
        c->have_prev = true;
        if (!kbuf_append(&c->prev, k, klen) ||
            (!c->have_first && !kbuf_append(&c->first, k, klen)))
            s = kura_err(KURA_E_NOMEM, "%s: out of memory", c->r->path);
        c->have_first = true;
        n++;
    }
    if (!bad && s == KURA_OK && it.err != KURA_OK)
        bad = "malformed entry in data block";
    if (!bad && s == KURA_OK && n == 0)
        bad = "empty data block";
    if (bad)
        report(c, off, bad);
    sst_block_iter_destroy(&it);
    c->st->entries += n;
    return s;
}

/* Reads block bi from the file and checks it. KURA_E_NOMEM, else KURA_OK (damage reported). */
static kura_status verify_block(verify_ctx *c, size_t bi)
{
    sst_reader *r = c->r;
    sst_blockmem *m = NULL;
    kura_status s = sst_read_contents(r->file, r->path, r->index[bi].h, &m);
    c->st->blocks++;
    if (s == KURA_E_NOMEM)
        return s;
    if (s != KURA_OK) { /* the message names the file and the block's offset */
        c->st->problems++;
        c->fn(c->arg, kura_last_error());
        return KURA_OK;
    }
    if (!sst_block_parse(&m->block, m->block.data, m->block.size))
        report(c, r->index[bi].h.off, "malformed data block");
    else
        s = verify_entries(c, bi, &m->block);
    free(m);
    return s;
}

/* The whole-table checks once every block is read. */
static void verify_totals(verify_ctx *c)
{
    const sst_props *p = &c->r->props;
    uint64_t off = c->r->footer.props.off;
    char what[160];
    if (c->st->problems > 0)
        return; /* the counts of a table with a bad block say nothing more */
    if (c->st->entries != p->entries) {
        snprintf(what, sizeof what, "%llu entries in the data blocks, %llu in the properties block",
                 (unsigned long long)c->st->entries, (unsigned long long)p->entries);
        report(c, off, what);
    }
    if (p->entries > 0 && (!c->have_first || c->first.len != p->smallest.len ||
                           memcmp(c->first.data, p->smallest.data, p->smallest.len) != 0))
        report(c, off, "first key differing from the smallest key of the properties block");
    if (p->entries > 0 && (!c->have_prev || c->prev.len != p->largest.len ||
                           memcmp(c->prev.data, p->largest.data, p->largest.len) != 0))
        report(c, off, "last key differing from the largest key of the properties block");
}

kura_status sst_reader_verify(sst_reader *r, sst_verify_fn fn, void *arg, sst_verify_stats *st)
{
    memset(st, 0, sizeof *st);
    kura_status s = sst_reader_load(r);
    if (s != KURA_OK)
        return s;
    verify_ctx c = {.r = r, .fn = fn, .arg = arg, .st = st, .prev = KBUF_INIT, .first = KBUF_INIT};
    for (size_t bi = 0; bi < r->nblocks && s == KURA_OK; bi++)
        s = verify_block(&c, bi);
    if (s == KURA_OK)
        verify_totals(&c);
    kbuf_free(&c.prev);
    kbuf_free(&c.first);
    return s;
}
