/*
 * writer.h - appending records to a WAL or MANIFEST file (format: docs/format/wal.md).
 *
 * This file contains the log writer: it frames opaque records into fragments, appends each
 * call's records with one io_append, and syncs on request, remembering how far the file is
 * durable so that every fragment it writes records that offset (the reader's proof that
 * bytes before it were fsync'ed).
 *
 * Failure is sticky (as SQLite after an I/O error): once an append or a sync has failed the
 * writer is "failed" and every later add or sync returns KURA_E_READONLY without touching the
 * file. A failed fdatasync is never retried, since the kernel may already have dropped the
 * dirty pages (DESIGN.md section 3: the partition turns read-only). After a failed append
 * the file's tail is in an unknown state, so the engine must move to a new file.
 *
 * Thread safety: adds are serialised by the caller (one add at a time). One sync may run
 * concurrently with an add (relaxed durability: a background thread syncs while writers
 * append); concurrent syncs are serialised inside the writer. size/synced/failed may be read
 * from any thread at any time. The io_env must accept an append and a sync of the same file
 * at the same time (POSIX does).
 *
 * Crash points: the writer passes none. "wal.after_append" and "wal.after_sync" (util/io.h)
 * belong to the engine's commit path, which passes them around its add and sync calls.
 */
#ifndef KURA_WAL_WRITER_H
#define KURA_WAL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/io.h"

typedef struct wal_writer wal_writer;

/*
 * Creates the file at path (truncating it if it exists) with io_open_write(env, path, kind);
 * kind is IO_KIND_WAL or IO_KIND_MANIFEST. `env` is borrowed and must outlive the writer;
 * `path` is copied. The new file is not synced and neither is its directory (the caller
 * syncs the directory). Errors: those of io_open_write, KURA_E_NOMEM.
 */
kura_status wal_writer_open(io_env *env, const char *path, io_kind kind, wal_writer **w_out);

/*
 * Frames the record rec[0..len) and appends it with one io_append call; `rec` is borrowed for
 * the call. The record is in the file (not necessarily durable) when this returns KURA_OK.
 * Errors: KURA_E_INVALID if the file would grow past 2^32 - 1 bytes (nothing is written and
 * the writer stays usable); KURA_E_READONLY if the writer has failed before; the error of
 * io_append (KURA_E_IO, KURA_E_NOSPC), which makes the writer failed; KURA_E_NOMEM.
 */
kura_status wal_writer_add(wal_writer *w, const void *rec, size_t len);

/*
 * Frames n records (recs[i][0..lens[i])) as consecutive records and appends them with one
 * io_append call, so either all or (after a crash) a prefix of them reach the file. n == 0
 * is a no-op. Errors as wal_writer_add.
 */
kura_status wal_writer_addv(wal_writer *w, const void *const *recs, const size_t *lens,
                            size_t n);

/*
 * fdatasyncs the file. On success the durable offset becomes the size the file had when the
 * sync started (appends racing with the sync are not counted). If nothing was appended since
 * the last successful sync, returns KURA_OK without calling io_sync. Errors: KURA_E_READONLY
 * if the writer has failed before; the error of io_sync, which makes the writer failed for
 * good.
 */
kura_status wal_writer_sync(wal_writer *w);

/*
 * Makes the first `end` bytes durable: returns at once if a sync already covered them,
 * else syncs as wal_writer_sync. Callers that wait behind a running sync are usually covered
 * by it, so concurrent callers share fdatasyncs (the transaction pieces of engine/txn_log.c).
 * Errors as wal_writer_sync.
 */
kura_status wal_writer_sync_to(wal_writer *w, uint64_t end);

/* Bytes appended so far (the file size as the writer knows it). Any thread. */
uint64_t wal_writer_size(const wal_writer *w);

/* Bytes handed to the OS so far (the size without a buffer's pending bytes): a reader of the
 * file finds whole records up to here. Any thread. */
uint64_t wal_writer_written(wal_writer *w);

/* The durable offset: every byte before it has been fdatasync'ed. Any thread. */
uint64_t wal_writer_synced(const wal_writer *w);

/* True once an append or a sync has failed. Any thread. */
bool wal_writer_failed(const wal_writer *w);

/* Buffers up to cap framed bytes in memory before handing them to the OS (0, the default:
 * every add is one io_append). Pending bytes reach the OS when cap is reached, at
 * wal_writer_flush, at wal_writer_sync and at wal_writer_close: a crash of the process loses
 * them, so use it only where acknowledged writes need not survive a crash until the next sync
 * (relaxed durability). Call before the first add. */
void wal_writer_set_buffer(wal_writer *w, size_t cap);
/* Preallocates the file in chunks of durable zeros (io_prealloc) ahead of the appends, so a
 * sync only writes data (0, the default: none). Call before the first add. */
void wal_writer_set_prealloc(wal_writer *w, uint64_t chunk);
/* Hands buffered bytes to the OS (no sync). A failure fails the writer as a failed add does. */
kura_status wal_writer_flush(wal_writer *w);

/* Closes the file and frees the writer, without syncing (buffered bytes are flushed first).
 * Returns the first error, if any; the writer is freed either way. NULL is a no-op. */
kura_status wal_writer_close(wal_writer *w);

#endif
