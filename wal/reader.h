/*
 * reader.h - reading the records of a WAL or MANIFEST file back (docs/format/wal.md).
 *
 * This file contains the log reader used by recovery: it returns whole records in order and
 * decides how the log ends. The first bad fragment X (cut off, bad checksum, bad type or
 * length, out of order, zeroed) is either
 *   - damage to bytes that had been fsync'ed, proven by a later valid fragment whose
 *     durable_off is beyond X: KURA_E_CORRUPTION "<path>: corrupt WAL record at offset <X>:
 *     <why>", or
 *   - a torn tail (bytes never synced): the log ends at X; wal_reader_torn_at() tells X.
 * A bad record is never skipped to continue with later ones. Damage inside the last synced
 * append (after the last durable_off written in the file) looks like a torn tail.
 *
 * Thread safety: a reader belongs to one thread at a time.
 */
#ifndef KURA_WAL_READER_H
#define KURA_WAL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/io.h"

typedef struct wal_reader wal_reader;

/*
 * Opens path with io_open_read(env, path, kind) and reads its first block. `env` is borrowed
 * and must outlive the reader; `path` is copied (it names the file in error messages).
 * Errors: KURA_E_NOT_FOUND if the file does not exist, KURA_E_IO, KURA_E_NOMEM.
 */
kura_status wal_reader_open(io_env *env, const char *path, io_kind kind, wal_reader **r_out);

/*
 * Returns the next whole record: *rec_out points to *len_out bytes owned by the reader,
 * valid until the next call on this reader or wal_reader_close() (a 0-length record gives a
 * non-NULL pointer). Errors:
 *   KURA_E_NOT_FOUND   the end of the log (clean end or torn tail; no message is set)
 *   KURA_E_CORRUPTION  fsync'ed bytes are damaged; the message names the file and offset
 *   KURA_E_IO          a read failed
 *   KURA_E_NOMEM       a record could not be assembled
 * Once an error or the end has been returned, every later call returns it again (with the
 * same message).
 */
kura_status wal_reader_next(wal_reader *r, const uint8_t **rec_out, size_t *len_out);

/*
 * Goes to `offset`, which must be where a record starts (a wal_reader_record_offset or
 * wal_reader_end_offset of an earlier reading, or 0), and reads from there as if the file
 * ended at `limit` (UINT64_MAX: its end): a log still being appended to is read up to what
 * its writer had appended, whole records only (the change stream, engine/lsm/lsm_stream.c).
 * Clears an earlier end or error. Errors: KURA_E_IO (then sticky).
 */
kura_status wal_reader_seek(wal_reader *r, uint64_t offset, uint64_t limit);

/* The file offset of the first fragment of the record last returned (0 before any). */
uint64_t wal_reader_record_offset(const wal_reader *r);

/* The file offset just past the last fragment of the record last returned (0 before any):
 * where the valid log ends once wal_reader_next() has reported the end. */
uint64_t wal_reader_end_offset(const wal_reader *r);

/* -1, or, after wal_reader_next() returned KURA_E_NOT_FOUND for a torn tail, the offset X of
 * the first bad fragment (for a log cut inside a record, the offset where the missing
 * fragment should have started). */
int64_t wal_reader_torn_at(const wal_reader *r);

/* Closes the file and frees the reader. NULL is a no-op. */
void wal_reader_close(wal_reader *r);

#endif
