/*
 * reader.c - the log reader: reassembling records from fragments and deciding whether a bad
 * fragment is a torn tail or corruption (docs/format/wal.md, "Reading").
 *
 * Design. The file is read one 32 KiB block at a time with io_read_at into `block`; a FULL
 * record is returned in place, a FIRST..LAST record is assembled in `rec`. Every fragment is
 * checked (length inside its block, checksum, type, order, durable_off not beyond itself)
 * before anything of it is used. At the first bad fragment X the reader stops for good and
 * looks ahead (wal_look_ahead): a later fragment with a valid checksum whose durable_off is
 * beyond X proves that X had been fsync'ed, so the damage is corruption; without such proof X
 * is the torn, never-synced tail and the log ends there. The outcome is sticky: later calls
 * return the same end or error.
 */
#include "wal/reader.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/status.h"
#include "wal/format.h"

struct wal_reader {
    io_file *file;
    char *path;
    uint8_t *block;       /* WAL_BLOCK_SIZE bytes: the block being parsed */
    uint64_t block_start; /* file offset of block[0] */
    size_t block_len;     /* bytes of it in the file; < WAL_BLOCK_SIZE only at the end */
    size_t pos;           /* offset in block of the next fragment */
    kbuf rec;             /* the FIRST..LAST record being assembled */
    bool in_record;
    uint64_t rec_start;   /* offset of its FIRST fragment */
    uint64_t last_off;    /* first fragment of the record last returned */
    uint64_t last_end;    /* end of the record last returned */
    int64_t torn_at;
    uint64_t limit;       /* bytes past it are not read (UINT64_MAX: none) */
    kura_status done;     /* KURA_OK while reading; then the sticky outcome */
    char *done_msg;       /* message of a sticky error, NULL for the end */
    char why[160];        /* reason for the current bad fragment */
};

/* What the look-ahead found after a bad fragment at X. */
typedef struct wal_evidence {
    bool found;           /* a valid fragment with durable_off > X */
    uint64_t frag_off;    /* its offset */
    uint32_t durable_off; /* its durable_off */
    bool nonzero;         /* some byte at or after X is not zero */
} wal_evidence;

static bool wal_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static kura_status wal_reader_load(wal_reader *r, uint64_t start)
{
    size_t n = 0, want = WAL_BLOCK_SIZE;
    if (r->limit < start + want)
        want = r->limit > start ? (size_t)(r->limit - start) : 0;
    kura_status s = want ? io_read_at(r->file, start, r->block, want, &n) : KURA_OK;
    if (s != KURA_OK)
        return s;
    r->block_start = start;
    r->block_len = n;
    r->pos = 0;
    return KURA_OK;
}

kura_status wal_reader_open(io_env *env, const char *path, io_kind kind, wal_reader **r_out)
{
    wal_reader *r = calloc(1, sizeof *r);
    kura_status s = KURA_E_NOMEM;
    if (!r || !(r->path = strdup(path)) || !(r->block = malloc(WAL_BLOCK_SIZE))) {
        s = kura_err(KURA_E_NOMEM, "%s: out of memory opening log reader", path);
        goto fail;
    }
    if ((s = io_open_read(env, path, kind, &r->file)) != KURA_OK)
        goto fail;
    r->limit = UINT64_MAX;
    if ((s = wal_reader_load(r, 0)) != KURA_OK)
        goto fail;
    r->torn_at = -1;
    *r_out = r;
    return KURA_OK;
fail:
    wal_reader_close(r);
    return s;
}

void wal_reader_close(wal_reader *r)
{
    if (!r)
        return;
    io_close(r->file);
    kbuf_free(&r->rec);
    free(r->block);
    free(r->done_msg);
    free(r->path);
    free(r);
}

/* Makes status s (with the current message, unless it is the end) the sticky outcome. */
static kura_status wal_reader_stop(wal_reader *r, kura_status s)
{
    r->done = s;
    if (s != KURA_E_NOT_FOUND)
        r->done_msg = strdup(kura_last_error());
    return s;
}

/* Returns the sticky outcome again, restoring its message. */
static kura_status wal_reader_replay(const wal_reader *r)
{
    if (r->done == KURA_E_NOT_FOUND)
        return KURA_E_NOT_FOUND;
    return kura_err(r->done, "%s", r->done_msg ? r->done_msg : r->path);
}

/* In buf[0..n) at file offset `start`, tries every position from `from` on as a fragment
 * header (a resync after damage) and records the first valid fragment that proves X
 * durable. Candidates are filtered on type and X < durable_off <= own offset before the
 * checksum is computed. */
static void wal_resync_block(const uint8_t *buf, size_t n, uint64_t start, size_t from,
                             uint64_t x, wal_evidence *ev)
{
    for (size_t p = from; p + WAL_HEADER_SIZE <= n; p++) {
        wal_frag_header h;
        wal_frag_decode(buf + p, &h);
        if (h.type < WAL_FULL || h.type > WAL_LAST)
            continue;
        if (h.durable_off <= x || h.durable_off > start + p)
            continue;
        if (WAL_HEADER_SIZE + (size_t)h.len > n - p || !wal_frag_crc_ok(buf + p, &h))
            continue;
        ev->found = true;
        ev->frag_off = start + p;
        ev->durable_off = h.durable_off;
        return;
    }
}

/* Follows the chain of valid fragments from the start of the block buf[0..n) at file offset
 * `start` and records the first one that proves X durable. */
static void wal_chain_block(const uint8_t *buf, size_t n, uint64_t start, uint64_t x,
                            wal_evidence *ev)
{
    size_t p = 0;
    while (p + WAL_HEADER_SIZE <= n) {
        wal_frag_header h;
        wal_frag_decode(buf + p, &h);
        if (h.type < WAL_FULL || h.type > WAL_LAST || h.durable_off > start + p)
            return;
        if (WAL_HEADER_SIZE + (size_t)h.len > n - p || !wal_frag_crc_ok(buf + p, &h))
            return;
        if (h.durable_off > x) {
            ev->found = true;
            ev->frag_off = start + p;
            ev->durable_off = h.durable_off;
            return;
        }
        p += WAL_HEADER_SIZE + h.len;
    }
}

/* Looks for proof that the bad fragment at X (in the current block, or at its end) had been
 * durable: in X's block every later position, in every later block the fragment chain from
 * its start. Also notes whether anything after X is non-zero. Reads the rest of the file. */
static kura_status wal_look_ahead(wal_reader *r, uint64_t x, wal_evidence *ev)
{
    size_t xin = (size_t)(x - r->block_start);
    memset(ev, 0, sizeof *ev);
    ev->nonzero = !wal_all_zero(r->block + xin, r->block_len - xin);
    wal_resync_block(r->block, r->block_len, r->block_start, xin + 1, x, ev);
    if (ev->found || r->block_len < WAL_BLOCK_SIZE || r->block_start + WAL_BLOCK_SIZE >= r->limit)
        return KURA_OK; /* (nothing past the limit is read) */
    uint8_t *buf = malloc(WAL_BLOCK_SIZE);
    if (!buf)
        return kura_err(KURA_E_NOMEM, "%s: out of memory checking a damaged record", r->path);
    kura_status s = KURA_OK;
    for (uint64_t start = r->block_start + WAL_BLOCK_SIZE;; start += WAL_BLOCK_SIZE) {
        size_t n = 0;
        if ((s = io_read_at(r->file, start, buf, WAL_BLOCK_SIZE, &n)) != KURA_OK)
            break;
        ev->nonzero = ev->nonzero || !wal_all_zero(buf, n);
        wal_chain_block(buf, n, start, x, ev);
        if (ev->found || n < WAL_BLOCK_SIZE)
            break;
    }
    free(buf);
    return s;
}

/*
 * The log cannot continue at X, for reason `why`. Decides between corruption (proof that X
 * was durable), a clean end (a zero header with nothing but zeros after it, outside a
 * record) and a torn tail, and makes the outcome sticky.
 */
static kura_status wal_reader_end_at(wal_reader *r, uint64_t x, const char *why,
                                     bool zero_header)
{
    wal_evidence ev;
    kura_status s = wal_look_ahead(r, x, &ev);
    if (s != KURA_OK)
        return wal_reader_stop(r, s);
    if (ev.found) {
        kura_err(KURA_E_CORRUPTION,
                 "%s: corrupt WAL record at offset %llu: %s (the fragment at offset %llu "
                 "records the log durable up to offset %lu)",
                 r->path, (unsigned long long)x, why, (unsigned long long)ev.frag_off,
                 (unsigned long)ev.durable_off);
        return wal_reader_stop(r, KURA_E_CORRUPTION);
    }
    if (!(zero_header && !r->in_record && !ev.nonzero))
        r->torn_at = (int64_t)x;
    return wal_reader_stop(r, KURA_E_NOT_FOUND);
}

/* Fewer than a header's bytes are left in the current block. Returns KURA_OK after moving
 * to the next block, or the outcome at the end of the file. */
static kura_status wal_reader_block_end(wal_reader *r)
{
    size_t rem = r->block_len - r->pos;
    uint64_t off = r->block_start + r->pos;
    bool zeros = wal_all_zero(r->block + r->pos, rem);
    if (r->block_len == WAL_BLOCK_SIZE) {
        if (!zeros)
            return wal_reader_end_at(r, off, "non-zero bytes in the block trailer", false);
        kura_status s = wal_reader_load(r, r->block_start + WAL_BLOCK_SIZE);
        return s == KURA_OK ? KURA_OK : wal_reader_stop(r, s);
    }
    if (zeros && !r->in_record)
        return wal_reader_stop(r, KURA_E_NOT_FOUND); /* clean end */
    if (rem == 0)
        return wal_reader_end_at(r, off, "the file ends inside a record", false);
    return wal_reader_end_at(r, off, "fragment header cut off by the end of the file", false);
}

static const char *const wal_type_names[] = {"ZERO", "FULL", "FIRST", "MIDDLE", "LAST"};

/* Checks the fragment at r->pos (header h, at file offset off). Returns NULL if it is good,
 * else the reason (in r->why or static). */
static const char *wal_reader_check(wal_reader *r, const wal_frag_header *h, uint64_t off)
{
    const uint8_t *hdr = r->block + r->pos;
    if (h->type < WAL_FULL || h->type > WAL_LAST) {
        snprintf(r->why, sizeof r->why, "unknown fragment type %u", h->type);
        return r->why;
    }
    if (WAL_HEADER_SIZE + (size_t)h->len > r->block_len - r->pos) {
        if (WAL_HEADER_SIZE + (size_t)h->len > WAL_BLOCK_SIZE - r->pos) {
            snprintf(r->why, sizeof r->why, "fragment length %u runs past the end of its block",
                     h->len);
            return r->why;
        }
        return "fragment cut off by the end of the file";
    }
    if (!wal_frag_crc_ok(hdr, h))
        return "checksum mismatch";
    if (h->durable_off > off) {
        snprintf(r->why, sizeof r->why, "durable offset %lu lies beyond the fragment",
                 (unsigned long)h->durable_off);
        return r->why;
    }
    bool starts = h->type == WAL_FULL || h->type == WAL_FIRST;
    if (starts && r->in_record) {
        snprintf(r->why, sizeof r->why, "%s fragment inside the record started at offset %llu",
                 wal_type_names[h->type], (unsigned long long)r->rec_start);
        return r->why;
    }
    if (!starts && !r->in_record) {
        snprintf(r->why, sizeof r->why, "%s fragment without a FIRST", wal_type_names[h->type]);
        return r->why;
    }
    return NULL;
}

kura_status wal_reader_next(wal_reader *r, const uint8_t **rec_out, size_t *len_out)
{
    if (r->done != KURA_OK)
        return wal_reader_replay(r);
    for (;;) {
        if (r->block_len - r->pos < WAL_HEADER_SIZE) {
            kura_status s = wal_reader_block_end(r);
            if (s != KURA_OK)
                return s;
            continue;
        }
        uint64_t off = r->block_start + r->pos;
        const uint8_t *hdr = r->block + r->pos;
        wal_frag_header h;
        wal_frag_decode(hdr, &h);
        if (h.type == WAL_ZERO && h.len == 0)
            return wal_reader_end_at(r, off, "zeroed fragment header", true);
        const char *why = wal_reader_check(r, &h, off);
        if (why)
            return wal_reader_end_at(r, off, why, false);
        const uint8_t *payload = hdr + WAL_HEADER_SIZE;
        r->pos += WAL_HEADER_SIZE + h.len;
        if (h.type == WAL_FULL) {
            r->last_off = off;
            r->last_end = off + WAL_HEADER_SIZE + h.len;
            *rec_out = payload;
            *len_out = h.len;
            return KURA_OK;
        }
        if (h.type == WAL_FIRST) {
            r->in_record = true;
            r->rec_start = off;
            kbuf_clear(&r->rec);
        }
        if (!kbuf_append(&r->rec, payload, h.len)) {
            kura_err(KURA_E_NOMEM, "%s: out of memory assembling the record at offset %llu",
                     r->path, (unsigned long long)r->rec_start);
            return wal_reader_stop(r, KURA_E_NOMEM);
        }
        if (h.type == WAL_LAST) {
            r->in_record = false;
            r->last_off = r->rec_start;
            r->last_end = off + WAL_HEADER_SIZE + h.len;
            *rec_out = r->rec.data ? r->rec.data : payload;
            *len_out = r->rec.len;
            return KURA_OK;
        }
    }
}

kura_status wal_reader_seek(wal_reader *r, uint64_t offset, uint64_t limit)
{
    kbuf_clear(&r->rec);
    r->in_record = false;
    r->last_off = r->last_end = 0;
    r->torn_at = -1;
    r->done = KURA_OK;
    free(r->done_msg);
    r->done_msg = NULL;
    r->limit = limit;
    uint64_t start = offset - offset % WAL_BLOCK_SIZE;
    kura_status s = wal_reader_load(r, start);
    if (s != KURA_OK)
        return wal_reader_stop(r, s);
    r->pos = (size_t)(offset - start);
    if (r->pos > r->block_len)
        r->pos = r->block_len; /* past the end: the end */
    return KURA_OK;
}

uint64_t wal_reader_record_offset(const wal_reader *r)
{
    return r->last_off;
}

uint64_t wal_reader_end_offset(const wal_reader *r)
{
    return r->last_end;
}

int64_t wal_reader_torn_at(const wal_reader *r)
{
    return r->torn_at;
}
