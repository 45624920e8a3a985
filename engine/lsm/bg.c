/*
 * bg.c - a fixed-size thread pool with a FIFO job queue under one mutex.
 */
#include "engine/lsm/bg.h"

#include <stdlib.h>

#include "util/thread.h"

typedef struct bg_job {
    void (*fn)(void *);
    void *arg;
    struct bg_job *next;
} bg_job;

struct bg_pool {
    kmutex mu;
    kcond cv;
    bg_job *head, *tail;
    bool stopping;
    unsigned nthreads;
    kthread threads[];
};

static void *worker(void *arg)
{
    bg_pool *p = arg;
    kmutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping)
            kcond_wait(&p->cv, &p->mu);
        bg_job *j = p->head;
        if (!j)
            break; /* stopping and drained */
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        kmutex_unlock(&p->mu);
        j->fn(j->arg);
        free(j);
        kmutex_lock(&p->mu);
    }
    kmutex_unlock(&p->mu);
    return NULL;
}

bg_pool *bg_pool_new(unsigned nthreads)
{
    if (nthreads == 0)
        nthreads = 1;
    bg_pool *p = calloc(1, sizeof *p + nthreads * sizeof(kthread));
    if (!p)
        return NULL;
    kmutex_init(&p->mu);
    kcond_init(&p->cv);
    for (unsigned i = 0; i < nthreads; i++) {
        if (!kthread_start(&p->threads[i], worker, p)) {
            p->nthreads = i;
            bg_pool_free(p);
            return NULL;
        }
    }
    p->nthreads = nthreads;
    return p;
}

void bg_pool_free(bg_pool *p)
{
    if (!p)
        return;
    kmutex_lock(&p->mu);
    p->stopping = true;
    kcond_broadcast(&p->cv);
    kmutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        kthread_join(p->threads[i]);
    kcond_destroy(&p->cv);
    kmutex_destroy(&p->mu);
    free(p);
}

bool bg_pool_submit(bg_pool *p, void (*fn)(void *arg), void *arg)
{
    bg_job *j = malloc(sizeof *j);
    if (!j)
        return false;
    j->fn = fn;
    j->arg = arg;
    j->next = NULL;
    kmutex_lock(&p->mu);
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    kcond_signal(&p->cv);
    kmutex_unlock(&p->mu);
    return true;
}
