/*
 * io_fault.h - a fault-injecting io_env for crash and fault tests (SQLite's test6.c idea).
 *
 * This file contains the API of io_fault, an env that wraps a base env (normally the POSIX one,
 * on a real scratch directory) and passes every operation through to it while keeping the
 * bookkeeping needed to
 *   (a) inject errors: fail the n-th operation matching an op/kind mask with EIO, ENOSPC or a
 *       short write, once or from then on;
 *   (b) model durability: per file, how many bytes were written and how many were synced, and
 *       per directory, which creates/renames/unlinks were not yet made durable by sync_dir;
 *   (c) simulate a power cut: drop or tear every unsynced tail and undo every namespace change
 *       that was not sync_dir'ed, leaving on disk exactly a state a real crash could leave;
 *   (d) crash at named crash points (io_crash_point) or just before the n-th mutating
 *       operation, either freezing the env (every later operation fails) or _exit(137)ing.
 * docs/testing-io.md shows how tests combine these.
 *
 * Thread safety: every function here and every operation of the env may be called from any
 * thread. One mutex serializes all of them, including the base env's I/O (fsync too): each
 * operation happens entirely before or entirely after any other, a crash or a power loss, which
 * is what makes the model exact. Faults are deterministic given the sequence of operations;
 * with several threads that sequence is as deterministic as the threads' interleaving.
 *
 * The model (what "exact" means here):
 *  - A file written through this env (created or truncated by open_write) has a length (bytes
 *    appended) and a synced length (the length at its last successful sync). Files never opened
 *    for writing through this env count as fully durable. open_write on an existing file
 *    truncates it; its synced length becomes 0 (the old content is gone even if the truncation
 *    is not durable: a simplification on the safe side).
 *  - A failed sync (injected or real) "poisons" the file, as Linux does after a failed fsync:
 *    its synced length never grows again, even after later successful syncs.
 *  - prealloc (io.h) writes durable zeros past the file's end, max(length, zeros end), and
 *    leaves the append position alone: a file also has a zeros end, the durable end of its
 *    preallocated zeros (0 without prealloc), and is max(length, zeros end) bytes long. Appends
 *    overwrite the zeros; a sync makes [0, length) durable as always. Only the zeros become
 *    durable by a prealloc: appended bytes past the synced length stay unsynced in the model
 *    (the real fdatasync flushes them too, but io.h does not promise it). For rules, counts and
 *    crash_at_op a prealloc is ONE mutating operation of type IO_OP_APPEND. A failed prealloc
 *    (injected or real) poisons the file like a failed sync, and then neither the synced
 *    length nor the zeros end grows again.
 *  - create (open_write or lock of a new path), mkdir, rename, unlink and rmdir change the
 *    namespace; each is durable only once sync_dir has been called on the directory it changed
 *    (both directories for a rename across directories). Until then a power loss undoes it.
 *    An unlinked file, and a file replaced by rename, wait in a hidden file named
 *    ".iofault.<n>.<name>" in the same directory (list_dir of this env hides such names; the
 *    POSIX env shows them). sync_dir deletes the hidden files whose removal it made durable,
 *    and so does io_fault_free (a normal end of the process makes everything durable).
 *  - Two simplifications for whole-directory operations: rmdir, and rename of a directory,
 *    first make every pending change inside that directory durable, as if sync_dir'ed.
 *  - Paths are normalised (repeated '/', "./" and a trailing '/' removed), not resolved: use
 *    one spelling per file (the engine builds every path from its database directory). The
 *    directory of "DIR/tree/p0000/000012.log" is "DIR/tree/p0000".
 *  - A file replaced by rename is kept as a copy (so that rename stays atomic on the real file
 *    system); appends through handles still open on the replaced file are not in the copy.
 *    kura never writes to a file after renaming another file over it.
 */
#ifndef KURA_UTIL_IO_FAULT_H
#define KURA_UTIL_IO_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/io.h"

typedef struct io_fault io_fault;

/* Creates a fault env over `base` (borrowed: it must outlive the io_fault; NULL = POSIX). No
 * rule, no crash armed, all counts 0. Returns NULL when out of memory. */
io_fault *io_fault_new(io_env *base);

/* Frees f. NULL is a no-op. Every io_file opened through the env must be closed before, and the
 * env must not be used any more. Pending unlinks and replacements become permanent (their
 * hidden files are deleted), as when a process ends without a power loss. */
void io_fault_free(io_fault *f);

/* The wrapping env, owned by f: valid until io_fault_free(f). Pass it as kura_options.io. */
io_env *io_fault_env(io_fault *f);

/* ---- (a) error injection --------------------------------------------------------------- */

/* Pseudo errno for io_fault_rule.error: an append writes the first n/2 bytes of its buffer
 * (rounded down), then fails with KURA_E_IO. For any other operation (a prealloc too: it
 * writes no zero) it means EIO. */
enum { IO_FAULT_SHORT_WRITE = -1 };

typedef struct io_fault_rule {
    uint64_t at;        /* fail the at-th matching operation (1-based, 0 acts as 1), counted
                           from io_fault_set_rule */
    uint32_t op_mask;   /* bits (1u << io_op); 0 = every op */
    uint32_t kind_mask; /* bits (1u << io_kind); 0 = every kind. Operations on a file have the
                           kind it was opened with; path operations (rename, unlink, path_size)
                           have the kind of the file at that path if this env opened it, else
                           IO_KIND_OTHER; directory operations (mkdir, rmdir, sync_dir, list)
                           have IO_KIND_OTHER; lock has IO_KIND_LOCK */
    int error;          /* EIO, ENOSPC, or IO_FAULT_SHORT_WRITE; anything else acts as EIO */
    bool persistent;    /* false: fail only the at-th; true: the at-th and every later one */
} io_fault_rule;

/* Installs a copy of *r (replacing any rule), or clears the rule when r is NULL, and resets the
 * matching and injected counters. Only one rule is active at a time.
 *
 * An injected failure does nothing (the operation does not reach the base env) except:
 *  - a short write appends its partial bytes;
 *  - a failed sync or prealloc poisons the file (see the model above); a failed prealloc
 *    writes no zero;
 *  - a failed close still closes and frees the file, like every close.
 * It returns KURA_E_NOSPC for ENOSPC and KURA_E_IO otherwise, with a kura_last_error() message
 * "<op> <path>: injected <error> (io_fault ...)". Matching counts operations of every thread. */
void io_fault_set_rule(io_fault *f, const io_fault_rule *r);

/* Operations that matched the rule since io_fault_set_rule (0 without a rule). */
uint64_t io_fault_matching_ops(io_fault *f);

/* Failures injected since io_fault_set_rule. */
uint64_t io_fault_injected(io_fault *f);

/* Operations of type `op` since io_fault_new or io_fault_reset_counts, whether they succeeded
 * or failed (preallocs count as IO_OP_APPEND). Calls refused because the env has crashed, and
 * calls on files of a crashed process (after a power loss), are not counted. */
uint64_t io_fault_op_count(io_fault *f, io_op op);

/* Zeroes io_fault_op_count, io_fault_mutating_ops and io_fault_point_hits. */
void io_fault_reset_counts(io_fault *f);

/* ---- (b)+(c) durability model and power loss -------------------------------------------- */

typedef enum { IO_LOSS_DROP = 0, IO_LOSS_TEAR = 1 } io_loss_mode;

/*
 * Simulates a power cut now, then a reboot:
 *  1. The "process" dies: every io_file still open through the env is closed underneath (locks
 *     are released). Such files may still be passed to io_close (it frees them and returns
 *     KURA_OK without touching the disk); every other operation on them fails with KURA_E_IO.
 *  2. For every file written through the env, in the order the env first saw them, the synced
 *     prefix survives and the unsynced tail is cut:
 *       DROP: the cut is at the synced length;
 *       TEAR: a cut is drawn uniformly in [synced_len, len]; bytes before it survive; then with
 *             probability 1/2 the part of the cut's 512-byte sector (by file offset) that lies
 *             in [max(sector start, synced_len), cut) is overwritten, with zeros or random
 *             bytes (a fair coin). All draws come from `seed` (splitmix64), so one seed and
 *             one sequence of operations give one outcome.
 *     Bytes from the cut on are removed, except below the zeros end of a preallocated file:
 *     there they turn back into zeros, so the file keeps max(cut, zeros end) bytes. Zeros a
 *     failed prealloc left past that size are removed too. No random draw is made for a file
 *     without unsynced bytes.
 *  3. Every namespace change not made durable by sync_dir is undone, the latest first: created
 *     files and directories are removed (even if their data was synced; a directory with all
 *     its content), renames are reversed and the file they replaced comes back, unlinked files
 *     and removed directories come back. A file that comes back has only what was synced.
 *  4. The env forgets all bookkeeping (everything now on disk counts as written and durable),
 *     clears the crashed state, the rule, and any crash not yet triggered; the counts are kept.
 *     The env can then be used for the reopen.
 * Call it once the crashed engine issues no more operations (after its close returned, even
 * with errors); concurrent operations are serialized before or after it. A failure of the base
 * env during the simulation (which only a broken disk causes) is printed to stderr.
 */
void io_fault_power_loss(io_fault *f, io_loss_mode mode, uint64_t seed);

/* ---- (d) crashes ------------------------------------------------------------------------ */

typedef enum { IO_CRASH_FREEZE = 0, IO_CRASH_EXIT = 1 } io_crash_action;

/*
 * Arms a crash at the nth (1-based) passage, counted from this call, of the crash point `name`
 * (io_crash_point(env, name); "*" matches every point). Replaces a crash armed by an earlier
 * io_fault_crash_at; nth == 0 or name == NULL disarms. When it triggers:
 *   FREEZE: the env becomes crashed: that io_crash_point call and every later operation fail
 *           with KURA_E_IO ("simulated crash at <name>: ..."), and nothing more reaches the
 *           disk. io_close still frees its file (returning KURA_E_IO); the underlying file
 *           stays open until io_fault_power_loss, as in a process that has not died yet.
 *           The test then calls io_fault_power_loss.
 *   EXIT:   _exit(137) at once, for tests that run the engine in a child process. Unsynced
 *           data is then whatever the OS has, as after kill -9; hidden files of pending
 *           unlinks stay behind (list_dir of an io_fault env hides them).
 * A crash triggers once; the armed crash is then cleared.
 */
void io_fault_crash_at(io_fault *f, const char *name, uint64_t nth, io_crash_action action);

/* Arms a crash just BEFORE the nth (1-based) mutating operation counted from this call:
 * append, prealloc, sync, rename, unlink, open_write, mkdir, rmdir, sync_dir (not lock, close
 * or reads). That operation does not happen. nth == 0 disarms. Independent of
 * io_fault_crash_at: whichever comes first triggers. Running a workload once and reading
 * io_fault_mutating_ops() gives the number of cut points to try. */
void io_fault_crash_at_op(io_fault *f, uint64_t nth, io_crash_action action);

/* True while the env is crashed (from a FREEZE crash until io_fault_power_loss). */
bool io_fault_crashed(io_fault *f);

/* Passages of crash point `name` since io_fault_new or io_fault_reset_counts ("*" = all). */
uint64_t io_fault_point_hits(io_fault *f, const char *name);

/* Mutating operations (see io_fault_crash_at_op) since io_fault_new or io_fault_reset_counts,
 * including those failed by a rule and the one a crash_at_op crash refused. */
uint64_t io_fault_mutating_ops(io_fault *f);

#endif
