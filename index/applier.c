/*
 * applier.c - the GSI applier: a queue of committed base batches and the thread that applies
 * them to the table's GSIs.
 *
 * The commit hooks of the base partitions queue a copy of each batch (in each partition's
 * commit order, which is all the order an index needs: an item lives in one partition, and
 * the base key at the end of every entry key keeps two items' entries apart). One thread per
 * table with GSIs applies them in queue order. The queue is bounded in bytes: a hook that
 * finds it full waits, and with it its partition's writers, as DynamoDB throttles a table
 * whose GSIs cannot keep up; so the backlog, the memory and the WAL the indexes retain stay
 * bounded. If applying fails (an index tree turned read-only after an I/O error), the error
 * is kept for the statistics, the rest is dropped unapplied so that writers never block on a
 * dead applier, and the index catches up from the base WALs at the next open.
 */
#include "index/runtime_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

kura_status rt_enqueue(idx_runtime *rt, uint32_t b, const uint8_t *rep, size_t len)
{
    rt_rec *r = malloc(sizeof *r + len);
    if (!r)
        return kura_err(KURA_E_NOMEM, "table %s: out of memory queueing a write for its GSIs",
                        rt->table_name);
    r->next = NULL;
    r->b = b;
    r->len = len;
    memcpy(r->rep, rep, len);
    kmutex_lock(&rt->qmu);
    /* back-pressure; a batch larger than the whole queue still goes in once it is empty */
    while (rt->qbytes > 0 && rt->qbytes + len > rt->qmax && !rt->stop)
        kcond_wait(&rt->qcv, &rt->qmu);
    r->t_ns = know_ns();
    if (rt->tail)
        rt->tail->next = r;
    else
        rt->head = r;
    rt->tail = r;
    rt->qbytes += len;
    rt->enqueued++;
    kcond_broadcast(&rt->qcv);
    kmutex_unlock(&rt->qmu);
    return KURA_OK;
}

/* Applies one batch to the GSIs, then checkpoints those that need it. */
static kura_status apply_rec(idx_runtime *rt, const rt_rec *r)
{
    kura_status s = rt_apply_batch(rt, r->b, r->rep, r->len, IDX_GLOBAL);
    return s == KURA_OK ? rt_checkpoint_kind(rt, IDX_GLOBAL) : s;
}

static void *applier_main(void *arg)
{
    idx_runtime *rt = arg;
    kmutex_lock(&rt->qmu);
    for (;;) {
        while ((!rt->head || rt->paused) && !rt->stop)
            kcond_wait(&rt->qcv, &rt->qmu);
        if (!rt->head) /* stopping with nothing left */
            break;
        if (rt->paused && rt->stop)
            break; /* close while paused: the rest is in the WAL */
        rt_rec *r = rt->head;
        rt->head = r->next;
        if (!rt->head)
            rt->tail = NULL;
        rt->cur_t_ns = r->t_ns;
        bool failed = rt->error != KURA_OK;
        kmutex_unlock(&rt->qmu);
        kura_status s = failed ? KURA_OK : apply_rec(rt, r);
        kmutex_lock(&rt->qmu);
        if (s != KURA_OK && rt->error == KURA_OK) {
            rt->error = s;
            snprintf(rt->error_msg, sizeof rt->error_msg, "%s", kura_last_error());
        }
        if (s == KURA_OK && !failed)
            rt->applied_count++;
        rt->cur_t_ns = 0;
        rt->qbytes -= r->len;
        rt->done++;
        free(r);
        kcond_broadcast(&rt->qcv);
    }
    kmutex_unlock(&rt->qmu);
    return NULL;
}

kura_status rt_applier_start(idx_runtime *rt)
{
    if (!kthread_start(&rt->thread, applier_main, rt))
        return kura_err(KURA_E_NOMEM, "table %s: cannot start the GSI applier thread",
                        rt->table_name);
    rt->thread_started = true;
    return KURA_OK;
}

void rt_applier_stop(idx_runtime *rt)
{
    if (!rt->thread_started)
        return;
    kmutex_lock(&rt->qmu);
    rt->stop = true;
    kcond_broadcast(&rt->qcv);
    kmutex_unlock(&rt->qmu);
    kthread_join(rt->thread);
    rt->thread_started = false;
    /* what a paused applier left: it is in the WAL, and the next open applies it */
    while (rt->head) {
        rt_rec *r = rt->head;
        rt->head = r->next;
        free(r);
    }
    rt->tail = NULL;
    rt->qbytes = 0;
}
