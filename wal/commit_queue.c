/*
 * commit_queue.c - the group-commit queue: a FIFO of stack-allocated waiters under one mutex.
 *
 * Invariants (all under mu): the queue is the singly linked list head..tail; the head is the
 * leader, or the waiter about to become it; a leader's group is always a prefix of the queue
 * starting at the head, so finishing it pops that prefix. A waiter waits on its own condition
 * variable for "done, or I am the head"; wal_cq_finish signals exactly the waiters whose
 * predicate it made true, so there are no spurious hand-offs and no polling. The signals are
 * sent while holding mu, so a woken follower cannot return (and destroy its waiter) before
 * the leader has stopped touching it.
 */
#include "wal/commit_queue.h"

#include <assert.h>
#include <stdlib.h>

struct wal_cq {
    kmutex mu;
    wal_cq_waiter *head;
    wal_cq_waiter *tail;
    size_t pending;
};

wal_cq *wal_cq_new(void)
{
    wal_cq *q = calloc(1, sizeof *q);
    if (q)
        kmutex_init(&q->mu);
    return q;
}

void wal_cq_free(wal_cq *q)
{
    if (!q)
        return;
    assert(q->head == NULL);
    kmutex_destroy(&q->mu);
    free(q);
}

bool wal_cq_join(wal_cq *q, wal_cq_waiter *w)
{
    kcond_init(&w->cv);
    w->status = KURA_OK;
    w->done = false;
    w->next = NULL;
    kmutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
    q->pending++;
    while (!w->done && q->head != w)
        kcond_wait(&w->cv, &q->mu);
    bool leader = !w->done;
    kmutex_unlock(&q->mu);
    /* Nobody signals w again: a follower is off the queue, a leader is only finished. */
    kcond_destroy(&w->cv);
    return leader;
}

bool wal_cq_try_join(wal_cq *q, wal_cq_waiter *w)
{
    w->status = KURA_OK;
    w->done = false;
    w->next = NULL;
    kmutex_lock(&q->mu);
    bool leader = q->head == NULL;
    if (leader) {
        q->head = q->tail = w;
        q->pending++;
    }
    kmutex_unlock(&q->mu);
    return leader;
}

size_t wal_cq_group(wal_cq *q, wal_cq_waiter *leader, wal_cq_waiter **group, size_t max_n,
                    size_t max_bytes, size_t (*bytes_of)(void *payload))
{
    assert(max_n >= 1);
    size_t n = 0, nbytes = 0;
    kmutex_lock(&q->mu);
    assert(q->head == leader);
    for (wal_cq_waiter *w = leader; w && n < max_n; w = w->next) {
        size_t b = bytes_of ? bytes_of(w->payload) : 0;
        if (n > 0 && (b > max_bytes || nbytes + b > max_bytes))
            break;
        group[n++] = w;
        nbytes += b;
    }
    kmutex_unlock(&q->mu);
    return n;
}

bool wal_cq_group_sync(wal_cq_waiter *const *group, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (group[i]->sync)
            return true;
    return false;
}

/* Pops the group (a prefix of the queue), wakes its followers and the next leader. */
static void wal_cq_release(wal_cq *q, wal_cq_waiter **group, size_t n, bool set_status,
                           kura_status status)
{
    assert(n >= 1);
    kmutex_lock(&q->mu);
    assert(q->head == group[0]);
    q->head = group[n - 1]->next;
    if (!q->head)
        q->tail = NULL;
    q->pending -= n;
    for (size_t i = 0; i < n; i++) {
        if (set_status)
            group[i]->status = status;
        group[i]->done = true;
        if (i > 0) /* the leader is not waiting */
            kcond_signal(&group[i]->cv);
    }
    if (q->head)
        kcond_signal(&q->head->cv);
    kmutex_unlock(&q->mu);
}

void wal_cq_finish(wal_cq *q, wal_cq_waiter **group, size_t n, kura_status status)
{
    wal_cq_release(q, group, n, true, status);
}

void wal_cq_finish_each(wal_cq *q, wal_cq_waiter **group, size_t n)
{
    wal_cq_release(q, group, n, false, KURA_OK);
}

size_t wal_cq_pending(wal_cq *q)
{
    kmutex_lock(&q->mu);
    size_t n = q->pending;
    kmutex_unlock(&q->mu);
    return n;
}
