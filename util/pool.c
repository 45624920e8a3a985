/*
 * pool.c - a fixed-size thread pool with a FIFO job queue under one mutex (see pool.h).
 */
#include "util/pool.h"

#include <stdlib.h>

#include "util/thread.h"

typedef struct pool_job {
    void (*fn)(void *);
    void *arg;
    struct pool_job *next;
} pool_job;

struct kpool {
    kmutex mu;
    kcond cv;
    pool_job *head, *tail;
    bool stopping;
    bool joined;
    unsigned nthreads;
    kthread threads[];
};

static void *worker(void *arg)
{
    kpool *p = arg;
    kmutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping)
            kcond_wait(&p->cv, &p->mu);
        pool_job *j = p->head;
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

kpool *kpool_new(unsigned nthreads)
{
    if (nthreads == 0)
        nthreads = 1;
    kpool *p = calloc(1, sizeof *p + nthreads * sizeof(kthread));
    if (!p)
        return NULL;
    kmutex_init(&p->mu);
    kcond_init(&p->cv);
    for (unsigned i = 0; i < nthreads; i++) {
        if (!kthread_start(&p->threads[i], worker, p)) {
            p->nthreads = i;
            kpool_free(p);
            return NULL;
        }
    }
    p->nthreads = nthreads;
    return p;
}

void kpool_stop(kpool *p)
{
    kmutex_lock(&p->mu);
    bool join = !p->joined;
    p->stopping = true;
    p->joined = true;
    kcond_broadcast(&p->cv);
    kmutex_unlock(&p->mu);
    for (unsigned i = 0; join && i < p->nthreads; i++)
        kthread_join(p->threads[i]);
}

void kpool_free(kpool *p)
{
    if (!p)
        return;
    kpool_stop(p);
    kcond_destroy(&p->cv);
    kmutex_destroy(&p->mu);
    free(p);
}

bool kpool_submit(kpool *p, void (*fn)(void *arg), void *arg)
{
    pool_job *j = malloc(sizeof *j);
    if (!j)
        return false;
    j->fn = fn;
    j->arg = arg;
    j->next = NULL;
    kmutex_lock(&p->mu);
    if (p->stopping) {
        kmutex_unlock(&p->mu);
        free(j);
        return false;
    }
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    kcond_signal(&p->cv);
    kmutex_unlock(&p->mu);
    return true;
}
