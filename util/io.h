/*
 * io.h - the file-system boundary of kura: one table of functions for every file operation.
 *
 * Every byte kura reads or writes goes through an io_env (as SQLite's VFS). The POSIX env is
 * the real one; util/io_fault.h wraps it to inject EIO/ENOSPC/short writes, fail fsyncs,
 * simulate power loss and crash at named points. Nothing outside util/ calls open(2),
 * write(2), fsync(2), rename(2) etc. directly.
 *
 * Contract of every function:
 *  - Returns KURA_OK or an error status (KURA_E_IO, KURA_E_NOSPC, KURA_E_NOT_FOUND for a
 *    missing path where stated, KURA_E_BUSY for a held lock, KURA_E_NOMEM) with a message in
 *    kura_last_error() naming the path and the operation.
 *  - Thread safety: an env may be used from any number of threads. One io_file may be read
 *    (read_at) by many threads at once. On one file, one append and one sync may run at the
 *    same time (relaxed durability's background sync), but never two appends or two syncs.
 *  - Files are append-only once written: kura never overwrites bytes in place, except the
 *    zeros written by prealloc. That is what lets the fault env model "what survived a power
 *    loss" by lengths: the synced prefix, then (durable) zeros up to the preallocated end.
 */
#ifndef KURA_UTIL_IO_H
#define KURA_UTIL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

/* What a file is, so fault rules can target e.g. only WAL appends. */
typedef enum io_kind {
    IO_KIND_WAL = 0,
    IO_KIND_SST,
    IO_KIND_MANIFEST,
    IO_KIND_CURRENT, /* the CURRENT pointer and other small files replaced by rename */
    IO_KIND_LOCK,
    IO_KIND_OTHER,
    IO_KIND_COUNT
} io_kind;

/* Operations, for fault-rule masks (bit 1u << op). */
typedef enum io_op {
    IO_OP_OPEN = 0, /* open_read, open_write, lock */
    IO_OP_READ,
    IO_OP_APPEND,
    IO_OP_SYNC,
    IO_OP_CLOSE,
    IO_OP_SIZE, /* file_size, path_size */
    IO_OP_RENAME,
    IO_OP_UNLINK, /* unlink, rmdir */
    IO_OP_MKDIR,
    IO_OP_SYNC_DIR,
    IO_OP_LIST,
    IO_OP_COUNT
} io_op;

typedef struct io_env io_env;
typedef struct io_file io_file;

/* Every implementation's file struct starts with this header. */
struct io_file {
    io_env *env;
    io_kind kind;
};

typedef struct io_ops {
    /* Opens an existing file for reading. KURA_E_NOT_FOUND if it does not exist. */
    kura_status (*open_read)(io_env *env, const char *path, io_kind kind, io_file **f_out);
    /* Creates (or truncates, when it exists) a file for appending. */
    kura_status (*open_write)(io_env *env, const char *path, io_kind kind, io_file **f_out);
    /* Closes and frees f; f is gone even if an error is returned. */
    kura_status (*close)(io_file *f);
    /* Reads up to n bytes at off; *nread_out < n only at end of file. */
    kura_status (*read_at)(io_file *f, uint64_t off, void *buf, size_t n, size_t *nread_out);
    /* Appends all n bytes at the end of the file (a short write is an error). */
    kura_status (*append)(io_file *f, const void *buf, size_t n);
    /* fdatasync. A failure here is final: callers must never retry it (DESIGN.md section 3:
     * the partition turns read-only), because the kernel may have dropped the dirty pages. */
    kura_status (*sync)(io_file *f);
    kura_status (*file_size)(io_file *f, uint64_t *size_out);
    /* Size of the file at path; KURA_E_NOT_FOUND if it does not exist. */
    kura_status (*path_size)(io_env *env, const char *path, uint64_t *size_out);
    /* Atomically replaces `to` with `from` (rename(2)). Durable only after sync_dir. */
    kura_status (*rename)(io_env *env, const char *from, const char *to);
    /* KURA_E_NOT_FOUND if it does not exist. Durable only after sync_dir. */
    kura_status (*unlink)(io_env *env, const char *path);
    /* Creates a directory; succeeds if it already exists. */
    kura_status (*mkdir)(io_env *env, const char *path);
    /* Removes an empty directory. */
    kura_status (*rmdir)(io_env *env, const char *path);
    /* fsyncs a directory, making creates, renames and unlinks in it durable. */
    kura_status (*sync_dir)(io_env *env, const char *path);
    /* Lists the names in a directory (not "." and ".."); *names_out is an array of *n_out
     * malloc'ed strings, freed with io_free_names(). KURA_E_NOT_FOUND if it does not exist. */
    kura_status (*list_dir)(io_env *env, const char *path, char ***names_out, size_t *n_out);
    /* Takes an exclusive advisory lock on path (created if needed); KURA_E_BUSY if another
     * process holds it. Released by close. */
    kura_status (*lock)(io_env *env, const char *path, io_file **f_out);
    /* Writes nbytes of zeros after the end of the file and fdatasyncs them, leaving the append
     * position where it was: later appends overwrite the zeros, so that an fdatasync of them
     * has no file size to update (about a third cheaper on ext4). Readers see the zeros past
     * the appended bytes (a WAL reads them as a clean end). A failure is final, as a failed
     * sync. The fault env counts it as one IO_OP_APPEND (util/io_fault.h). */
    kura_status (*prealloc)(io_file *f, uint64_t nbytes);
    /* A named crash point (see the list below). POSIX: returns KURA_OK. The fault env may
     * turn it into a simulated crash (returns KURA_E_IO and fails every later operation) or
     * kill the process. Callers propagate a failure like any I/O error. */
    kura_status (*crash_point)(io_env *env, const char *name);
} io_ops;

struct io_env {
    const io_ops *ops;
};

/* The POSIX env, a process-wide singleton (never freed). */
io_env *io_env_posix(void);

/* The env to use for `opts->io`, defaulting to POSIX. */
static inline io_env *io_env_or_default(io_env *env)
{
    return env ? env : io_env_posix();
}

void io_free_names(char **names, size_t n);

/* Convenience wrappers, so call sites read io_append(f, p, n). */
static inline kura_status io_open_read(io_env *e, const char *path, io_kind k, io_file **f)
{
    return e->ops->open_read(e, path, k, f);
}
static inline kura_status io_open_write(io_env *e, const char *path, io_kind k, io_file **f)
{
    return e->ops->open_write(e, path, k, f);
}
static inline kura_status io_close(io_file *f)
{
    return f ? f->env->ops->close(f) : KURA_OK;
}
static inline kura_status io_read_at(io_file *f, uint64_t off, void *buf, size_t n,
                                     size_t *nread_out)
{
    return f->env->ops->read_at(f, off, buf, n, nread_out);
}
static inline kura_status io_append(io_file *f, const void *buf, size_t n)
{
    return f->env->ops->append(f, buf, n);
}
static inline kura_status io_sync(io_file *f)
{
    return f->env->ops->sync(f);
}
static inline kura_status io_file_size(io_file *f, uint64_t *size_out)
{
    return f->env->ops->file_size(f, size_out);
}
static inline kura_status io_path_size(io_env *e, const char *path, uint64_t *size_out)
{
    return e->ops->path_size(e, path, size_out);
}
static inline kura_status io_rename(io_env *e, const char *from, const char *to)
{
    return e->ops->rename(e, from, to);
}
static inline kura_status io_unlink(io_env *e, const char *path)
{
    return e->ops->unlink(e, path);
}
static inline kura_status io_mkdir(io_env *e, const char *path)
{
    return e->ops->mkdir(e, path);
}
static inline kura_status io_rmdir(io_env *e, const char *path)
{
    return e->ops->rmdir(e, path);
}
static inline kura_status io_sync_dir(io_env *e, const char *path)
{
    return e->ops->sync_dir(e, path);
}
static inline kura_status io_list_dir(io_env *e, const char *path, char ***names_out,
                                      size_t *n_out)
{
    return e->ops->list_dir(e, path, names_out, n_out);
}
static inline kura_status io_lock(io_env *e, const char *path, io_file **f_out)
{
    return e->ops->lock(e, path, f_out);
}
static inline kura_status io_prealloc(io_file *f, uint64_t nbytes)
{
    return f->env->ops->prealloc(f, nbytes);
}
static inline kura_status io_crash_point(io_env *e, const char *name)
{
    return e->ops->crash_point(e, name);
}

/* Reads exactly n bytes at off; a short read is KURA_E_CORRUPTION naming path and offset. */
kura_status io_read_exact(io_file *f, const char *path, uint64_t off, void *buf, size_t n);

/* Writes a whole small file durably: write path.tmp, sync it, rename over path, sync dir. */
kura_status io_write_file_atomic(io_env *e, const char *dir, const char *name, io_kind kind,
                                 const void *data, size_t n);

/* Reads a whole file (up to max_bytes) into a malloc'ed buffer the caller frees. */
kura_status io_read_file(io_env *e, const char *path, io_kind kind, size_t max_bytes,
                         void **data_out, size_t *n_out);

/*
 * Named crash points (the fault env may crash at the k-th passage of any of them):
 *   wal.after_append          a WAL batch was written, not yet synced
 *   wal.after_sync            a WAL batch is durable, not yet in the memtable
 *   flush.after_table         an L0 SSTable is written and synced, not yet in the manifest
 *   flush.after_manifest      the manifest records the flush, old WAL not yet deleted
 *   compaction.after_tables   compaction outputs written, not yet in the manifest
 *   compaction.after_manifest the manifest records the compaction, inputs not yet deleted
 *   manifest.after_new        a new manifest file is written, CURRENT not yet switched
 *   manifest.after_current    CURRENT switched, old manifest not yet deleted
 *   recovery.after_replay     WAL replayed into memtables, before the recovery flush
 *   txn.after_prepare         a transaction's piece is in one partition's WAL, not yet synced
 *   txn.before_range          a transaction's pieces are durable, its sequence range not yet
 *                             allocated (other writes to its partitions may go on)
 *   txn.after_commit          a transaction's commit record is durable, no piece applied yet
 */

#endif
