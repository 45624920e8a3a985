/*
 * writer.c - the log writer: framing records into fragments (docs/format/wal.md), one
 * append per call, sync with a durable offset, and a sticky failed state.
 *
 * Design. The add path frames every record of the call into `frame`, a buffer reused across
 * calls, then issues a single io_append, so a crash leaves a prefix of whole calls plus at
 * most one torn call. `block_off` (the position inside the current 32 KiB block) is only
 * touched by adds, which the caller serialises. The counters that a concurrent sync or any
 * reader looks at (size, synced, failed) are atomics: an add publishes the new size only
 * after its append returned, so a sync that reads the size before calling fdatasync never
 * claims bytes that were not yet written. Syncs take `sync_mu`, so two syncs never overlap
 * and a sync that follows a failed one sees the failure instead of retrying.
 *
 * Buffering (wal_writer_set_buffer): framed bytes may instead collect in `pending` and reach
 * the OS in one io_append once `buffer_cap` bytes are pending, at wal_writer_flush, at a sync,
 * or at close. This is relaxed durability's fast path: one write(2) per ~64 KiB instead of one
 * per group. `pending` and `written` are guarded by `buf_mu` because the background syncer
 * flushes while the leader adds. `size` counts pending bytes too; `synced` <= `written` <=
 * `size`.
 */
#include "wal/writer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/status.h"
#include "util/thread.h"
#include "wal/format.h"

/* A frame buffer that grew past this (a huge record) is released after the append. */
enum { WAL_FRAME_KEEP_BYTES = 1 << 20 };

struct wal_writer {
    io_file *file;
    char *path;
    size_t block_off; /* offset inside the current block; adds only */
    kbuf frame;       /* fragments of the call being added; adds only */
    kmutex sync_mu;   /* serialises syncs */
    kmutex buf_mu;    /* guards pending and written */
    kbuf pending;     /* framed bytes not yet handed to the OS */
    size_t buffer_cap; /* 0: every add is one io_append */
    uint64_t written; /* bytes handed to the OS */
    uint64_t prealloc_chunk; /* 0: no preallocation */
    uint64_t prealloc_end;   /* zeros are durable up to here */
    _Atomic uint64_t size;
    _Atomic uint64_t synced;
    _Atomic bool failed;
};

kura_status wal_writer_open(io_env *env, const char *path, io_kind kind, wal_writer **w_out)
{
    wal_writer *w = calloc(1, sizeof *w);
    char *path_copy = strdup(path);
    if (!w || !path_copy) {
        free(w);
        free(path_copy);
        return kura_err(KURA_E_NOMEM, "%s: out of memory opening log writer", path);
    }
    kura_status s = io_open_write(env, path, kind, &w->file);
    if (s != KURA_OK) {
        free(w);
        free(path_copy);
        return s;
    }
    w->path = path_copy;
    kmutex_init(&w->sync_mu);
    kmutex_init(&w->buf_mu);
    atomic_init(&w->size, 0);
    atomic_init(&w->synced, 0);
    atomic_init(&w->failed, false);
    *w_out = w;
    return KURA_OK;
}

/*
 * Appends the fragments of one record to `out`, starting at *block_off inside a block, and
 * advances *block_off. Returns false on allocation failure (out is then partially written;
 * the caller discards it).
 */
static bool wal_frame_record(kbuf *out, size_t *block_off, uint32_t durable_off,
                             const uint8_t *rec, size_t len)
{
    bool first = true;
    do {
        size_t avail = WAL_BLOCK_SIZE - *block_off;
        if (avail < WAL_HEADER_SIZE) {
            static const uint8_t zeros[WAL_HEADER_SIZE];
            if (!kbuf_append(out, zeros, avail))
                return false;
            *block_off = 0;
            avail = WAL_BLOCK_SIZE;
        }
        size_t frag = len < avail - WAL_HEADER_SIZE ? len : avail - WAL_HEADER_SIZE;
        bool last = frag == len;
        wal_frag_type type = first ? (last ? WAL_FULL : WAL_FIRST) : (last ? WAL_LAST : WAL_MIDDLE);
        if (!kbuf_reserve(out, WAL_HEADER_SIZE + frag))
            return false;
        uint8_t *hdr = out->data + out->len;
        if (frag)
            memcpy(hdr + WAL_HEADER_SIZE, rec, frag);
        wal_frag_encode(hdr, type, durable_off, hdr + WAL_HEADER_SIZE, (uint16_t)frag);
        out->len += WAL_HEADER_SIZE + frag;
        *block_off += WAL_HEADER_SIZE + frag;
        rec += frag;
        len -= frag;
        first = false;
    } while (len > 0);
    return true;
}

/* Makes sure n more bytes at `written` land in preallocated space. A failure is final. */
static kura_status ensure_prealloc(wal_writer *w, uint64_t n)
{
    if (!w->prealloc_chunk || w->written + n <= w->prealloc_end)
        return KURA_OK;
    uint64_t need = w->written + n - w->prealloc_end;
    uint64_t chunk = (need + w->prealloc_chunk - 1) / w->prealloc_chunk * w->prealloc_chunk;
    kura_status s = io_prealloc(w->file, chunk);
    if (s != KURA_OK) {
        atomic_store(&w->failed, true);
        return s;
    }
    w->prealloc_end += chunk;
    return KURA_OK;
}

/* Hands the pending bytes to the OS. buf_mu held. A failure fails the writer for good. */
static kura_status flush_locked(wal_writer *w)
{
    if (!w->pending.len)
        return KURA_OK;
    if (atomic_load(&w->failed))
        return kura_err(KURA_E_READONLY, "%s: log writer failed after an earlier I/O error",
                        w->path);
    kura_status s = ensure_prealloc(w, w->pending.len);
    if (s == KURA_OK)
        s = io_append(w->file, w->pending.data, w->pending.len);
    if (s != KURA_OK) {
        atomic_store(&w->failed, true);
        return s;
    }
    w->written += w->pending.len;
    kbuf_clear(&w->pending);
    return KURA_OK;
}

void wal_writer_set_buffer(wal_writer *w, size_t cap)
{
    w->buffer_cap = cap;
}

void wal_writer_set_prealloc(wal_writer *w, uint64_t chunk)
{
    w->prealloc_chunk = chunk;
}

kura_status wal_writer_flush(wal_writer *w)
{
    kmutex_lock(&w->buf_mu);
    kura_status s = flush_locked(w);
    kmutex_unlock(&w->buf_mu);
    return s;
}

static kura_status wal_writer_failed_err(const wal_writer *w)
{
    return kura_err(KURA_E_READONLY, "%s: log writer failed after an earlier I/O error",
                    w->path);
}

static kura_status wal_writer_too_big(const wal_writer *w, uint64_t nbytes)
{
    return kura_err(KURA_E_INVALID, "%s: appending %llu bytes would grow the log past %llu bytes",
                    w->path, (unsigned long long)nbytes, (unsigned long long)WAL_MAX_FILE_SIZE);
}

kura_status wal_writer_addv(wal_writer *w, const void *const *recs, const size_t *lens,
                            size_t n)
{
    if (atomic_load(&w->failed))
        return wal_writer_failed_err(w);
    if (n == 0)
        return KURA_OK;
    uint64_t size = atomic_load(&w->size);
    uint32_t durable_off = (uint32_t)atomic_load(&w->synced); /* <= size < 2^32 */
    size_t block_off = w->block_off;
    kura_status s = KURA_OK;
    uint64_t payload = 0; /* refuse a hopeless append before allocating for it */
    for (size_t i = 0; i < n; i++) {
        if (lens[i] > WAL_MAX_FILE_SIZE - payload) {
            payload = WAL_MAX_FILE_SIZE + 1;
            break;
        }
        payload += lens[i];
    }
    if (payload > WAL_MAX_FILE_SIZE - size)
        return wal_writer_too_big(w, payload);
    kbuf_clear(&w->frame);
    for (size_t i = 0; i < n; i++) {
        if (!wal_frame_record(&w->frame, &block_off, durable_off, recs[i], lens[i])) {
            s = kura_err(KURA_E_NOMEM, "%s: out of memory framing a log record", w->path);
            goto out;
        }
    }
    if (size + w->frame.len > WAL_MAX_FILE_SIZE) {
        s = wal_writer_too_big(w, w->frame.len);
        goto out;
    }
    if (w->buffer_cap) {
        kmutex_lock(&w->buf_mu);
        if (!kbuf_append(&w->pending, w->frame.data, w->frame.len))
            s = kura_err(KURA_E_NOMEM, "%s: out of memory buffering a log record", w->path);
        else if (w->pending.len >= w->buffer_cap)
            s = flush_locked(w);
        kmutex_unlock(&w->buf_mu);
        if (s == KURA_E_NOMEM)
            goto out;
    } else if ((s = ensure_prealloc(w, w->frame.len)) == KURA_OK &&
               (s = io_append(w->file, w->frame.data, w->frame.len)) == KURA_OK) {
        w->written = size + w->frame.len;
    } else {
        atomic_store(&w->failed, true); /* the torn append is not counted */
        goto out;
    }
    /* buffered: the record is in the byte stream even if the flush failed (writer failed) */
    w->block_off = block_off;
    atomic_store(&w->size, size + w->frame.len);
out:
    if (w->frame.cap > WAL_FRAME_KEEP_BYTES)
        kbuf_free(&w->frame);
    return s;
}

kura_status wal_writer_add(wal_writer *w, const void *rec, size_t len)
{
    return wal_writer_addv(w, &rec, &len, 1);
}

/* sync_mu held. */
static kura_status sync_locked(wal_writer *w)
{
    if (atomic_load(&w->failed))
        return wal_writer_failed_err(w);
    kmutex_lock(&w->buf_mu);
    kura_status s = flush_locked(w);
    uint64_t size = w->written;
    kmutex_unlock(&w->buf_mu);
    if (s != KURA_OK || size == atomic_load(&w->synced))
        return s;
    if ((s = io_sync(w->file)) != KURA_OK) {
        atomic_store(&w->failed, true); /* never retry an fsync */
        return s;
    }
    atomic_store(&w->synced, size);
    return KURA_OK;
}

kura_status wal_writer_sync(wal_writer *w)
{
    kmutex_lock(&w->sync_mu);
    kura_status s = sync_locked(w);
    kmutex_unlock(&w->sync_mu);
    return s;
}

kura_status wal_writer_sync_to(wal_writer *w, uint64_t end)
{
    kmutex_lock(&w->sync_mu); /* behind a running sync, which may cover `end` */
    kura_status s = KURA_OK;
    if (atomic_load(&w->failed) || atomic_load(&w->synced) < end)
        s = sync_locked(w);
    kmutex_unlock(&w->sync_mu);
    return s;
}

uint64_t wal_writer_written(wal_writer *w)
{
    kmutex_lock(&w->buf_mu);
    uint64_t n = w->written;
    kmutex_unlock(&w->buf_mu);
    return n;
}

uint64_t wal_writer_size(const wal_writer *w)
{
    return atomic_load(&w->size);
}

uint64_t wal_writer_synced(const wal_writer *w)
{
    return atomic_load(&w->synced);
}

bool wal_writer_failed(const wal_writer *w)
{
    return atomic_load(&w->failed);
}

kura_status wal_writer_close(wal_writer *w)
{
    if (!w)
        return KURA_OK;
    kura_status s = atomic_load(&w->failed) ? KURA_OK : wal_writer_flush(w);
    kura_status c = io_close(w->file);
    if (s == KURA_OK)
        s = c;
    kmutex_destroy(&w->sync_mu);
    kmutex_destroy(&w->buf_mu);
    kbuf_free(&w->pending);
    kbuf_free(&w->frame);
    free(w->path);
    free(w);
    return s;
}
