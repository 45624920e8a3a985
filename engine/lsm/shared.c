/*
 * shared.c - sequence publication and the snapshot list.
 */
#include "engine/lsm/shared.h"

#include <time.h>

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

void lsm_shared_init(lsm_shared *sh)
{
    memset(sh, 0, sizeof *sh);
    kmutex_init(&sh->pub_mu);
    kcond_init(&sh->pub_cv);
    kmutex_init(&sh->snap_mu);
}

void lsm_shared_destroy(lsm_shared *sh)
{
    kcond_destroy(&sh->pub_cv);
    kmutex_destroy(&sh->pub_mu);
    kmutex_destroy(&sh->snap_mu);
    free(sh->snaps);
    free(sh->pending);
}

void lsm_seq_reset(lsm_shared *sh, uint64_t seq)
{
    __atomic_store_n(&sh->last_alloc, seq, __ATOMIC_RELEASE);
    __atomic_store_n(&sh->visible, seq, __ATOMIC_RELEASE);
}

void lsm_seq_complete(lsm_shared *sh, uint64_t first, uint64_t last)
{
    kmutex_lock(&sh->pub_mu);
    uint64_t visible = __atomic_load_n(&sh->visible, __ATOMIC_RELAXED);
    if (visible + 1 != first) {
        /* an earlier range is still in flight: park this one (at most one per partition) */
        if (sh->npending == sh->pending_cap) {
            size_t cap = sh->pending_cap ? sh->pending_cap * 2 : 16;
            lsm_seq_range *p = realloc(sh->pending, cap * sizeof *p);
            while (!p) { /* cannot drop a range: it would stall visibility forever */
                kmutex_unlock(&sh->pub_mu);
                sched_yield();
                kmutex_lock(&sh->pub_mu);
                p = realloc(sh->pending, cap * sizeof *p);
            }
            sh->pending = p;
            sh->pending_cap = cap;
        }
        sh->pending[sh->npending++] = (lsm_seq_range){first, last};
        kmutex_unlock(&sh->pub_mu);
        return;
    }
    visible = last;
    for (size_t i = 0; i < sh->npending;) { /* absorb parked ranges that are now next */
        if (sh->pending[i].first == visible + 1) {
            visible = sh->pending[i].last;
            sh->pending[i] = sh->pending[--sh->npending];
            i = 0;
        } else {
            i++;
        }
    }
    __atomic_store_n(&sh->visible, visible, __ATOMIC_RELEASE);
    if (sh->nwaiters)
        kcond_broadcast(&sh->pub_cv);
    kmutex_unlock(&sh->pub_mu);
}

void lsm_seq_wait(lsm_shared *sh, uint64_t seq)
{
    if (__atomic_load_n(&sh->visible, __ATOMIC_ACQUIRE) >= seq)
        return;
    kmutex_lock(&sh->pub_mu);
    sh->nwaiters++;
    while (__atomic_load_n(&sh->visible, __ATOMIC_ACQUIRE) < seq)
        kcond_wait(&sh->pub_cv, &sh->pub_mu);
    sh->nwaiters--;
    kmutex_unlock(&sh->pub_mu);
}

kura_status lsm_snapshot_acquire(lsm_shared *sh, uint64_t *seq_out)
{
    kmutex_lock(&sh->snap_mu);
    if (sh->nsnaps == sh->snaps_cap) {
        size_t cap = sh->snaps_cap ? sh->snaps_cap * 2 : 16;
        uint64_t *n = realloc(sh->snaps, cap * sizeof *n);
        if (!n) {
            kmutex_unlock(&sh->snap_mu);
            return kura_err(KURA_E_NOMEM, "snapshot: out of memory");
        }
        sh->snaps = n;
        sh->snaps_cap = cap;
    }
    /* visible only grows, so appending keeps the array sorted */
    uint64_t seq = lsm_visible(sh);
    sh->snaps[sh->nsnaps++] = seq;
    kmutex_unlock(&sh->snap_mu);
    *seq_out = seq;
    return KURA_OK;
}

void lsm_snapshot_release(lsm_shared *sh, uint64_t seq)
{
    kmutex_lock(&sh->snap_mu);
    for (size_t i = 0; i < sh->nsnaps; i++) {
        if (sh->snaps[i] == seq) {
            memmove(&sh->snaps[i], &sh->snaps[i + 1], (sh->nsnaps - i - 1) * sizeof *sh->snaps);
            sh->nsnaps--;
            break;
        }
    }
    kmutex_unlock(&sh->snap_mu);
}

uint64_t lsm_oldest_snapshot(lsm_shared *sh)
{
    kmutex_lock(&sh->snap_mu);
    uint64_t seq = sh->nsnaps ? sh->snaps[0] : lsm_visible(sh);
    kmutex_unlock(&sh->snap_mu);
    return seq;
}

uint64_t lsm_now_ms(lsm_shared *sh)
{
    return sh->clock_ms ? sh->clock_ms() : kwall_ms();
}
