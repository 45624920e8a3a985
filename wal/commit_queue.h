/*
 * commit_queue.h - group commit: concurrent writers of one WAL share one append and one sync.
 *
 * This file contains a LevelDB-style leader/follower queue (LevelDB DBImpl::Write). Each
 * writer enqueues a waiter that lives on its stack and blocks. The waiter at the front is the
 * leader: it takes itself and the waiters queued behind it as a group, does the work for the
 * whole group (the engine: frame every payload with one wal_writer_addv, one
 * wal_writer_sync, apply to the memtable) without holding the queue lock, then finishes the
 * group, which wakes the members with their status and makes the next queued waiter the
 * leader. Writers that arrive while a leader works queue up behind the group and form the
 * next one, so under load each sync covers many writes. Nobody spins: every wait is on the
 * waiter's own condition variable.
 *
 * The engine's leader loop, for reference:
 *
 *     wal_cq_waiter w = {.payload = &req, .sync = want_sync};
 *     if (!wal_cq_join(q, &w))
 *         return w.status;                      // a leader did our work
 *     wal_cq_waiter *group[64];
 *     size_t n = wal_cq_group(q, &w, group, 64, 1 << 20, req_bytes);
 *     kura_status s = write_and_maybe_sync(group, n, wal_cq_group_sync(group, n));
 *     wal_cq_finish(q, group, n, s);
 *     return s;
 *
 * Thread safety: any number of threads may join one queue. wal_cq_group and wal_cq_finish
 * are called by the current leader only, once each, in that order.
 */
#ifndef KURA_WAL_COMMIT_QUEUE_H
#define KURA_WAL_COMMIT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "kura.h"
#include "util/thread.h"

typedef struct wal_cq wal_cq; /* one per WAL (per partition) */

/* A writer's place in the queue. It lives on the writer's stack from wal_cq_join() until
 * that returns (a follower) or until the leader's wal_cq_finish() (a leader). */
typedef struct wal_cq_waiter {
    void *payload;    /* the caller's request, opaque to the queue; read by the leader while
                         the owner is blocked in wal_cq_join */
    bool sync;        /* the caller wants its write durable before it is acknowledged */
    kura_status status; /* the group's result, set by the leader for every member */
    bool done;        /* private: set by wal_cq_finish */
    struct wal_cq_waiter *next; /* private: the queue link */
    kcond cv;         /* private: signalled when done or when it becomes the leader */
} wal_cq_waiter;

/* A new empty queue, or NULL if out of memory. Free with wal_cq_free(). */
wal_cq *wal_cq_new(void);

/* Frees an empty queue (no waiter may be queued). NULL is a no-op. */
void wal_cq_free(wal_cq *q);

/*
 * Enqueues w (the caller sets payload and sync; join initialises the rest) and blocks until
 * either a leader completed w's work: returns false and w->status holds the result; or w is
 * at the front of the queue: it is now the leader and the function returns true.
 */
bool wal_cq_join(wal_cq *q, wal_cq_waiter *w);

/*
 * Makes w the leader if the queue is empty (true; then as after a wal_cq_join that returned
 * true), else leaves the queue alone and returns false at once: for a caller that must not
 * wait for one queue while it leads another (engine/txn_log.c).
 */
bool wal_cq_try_join(wal_cq *q, wal_cq_waiter *w);

/*
 * Leader only. Collects the leader and the waiters queued right behind it into group[0..n),
 * group[0] == leader, and returns n: at most max_n (>= 1) waiters, and followers only while
 * the sum of bytes_of(payload) stays <= max_bytes (the leader is always taken; bytes_of may
 * be NULL to limit by count only). bytes_of runs under the queue lock: it must be cheap and
 * must not call into the queue. Waiters that join later are not in this group; they form the
 * next one.
 */
size_t wal_cq_group(wal_cq *q, wal_cq_waiter *leader, wal_cq_waiter **group, size_t max_n,
                    size_t max_bytes, size_t (*bytes_of)(void *payload));

/* True if any member of the group asked for sync (the group is then synced as a whole). */
bool wal_cq_group_sync(wal_cq_waiter *const *group, size_t n);

/*
 * Leader only. Sets every member's status to `status`, marks them done, wakes them, removes
 * the group from the queue and wakes the next queued waiter as the new leader. The followers'
 * waiters must not be touched afterwards (their owners return and their stacks unwind).
 */
void wal_cq_finish(wal_cq *q, wal_cq_waiter **group, size_t n, kura_status status);

/* As wal_cq_finish, but keeps the status the leader stored in each member beforehand (for
 * groups in which some writes failed, e.g. a failed condition, and others succeeded). */
void wal_cq_finish_each(wal_cq *q, wal_cq_waiter **group, size_t n);

/* Waiters currently queued, the leader included (for tests and stats). */
size_t wal_cq_pending(wal_cq *q);

#endif
