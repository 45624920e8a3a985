/*
 * watch.c - the transaction workloads' watchdog (txn_int.h): a run that hangs fails.
 *
 * kura promises that transactions never deadlock (the item locks and the partitions' leads
 * are taken in one global order) and kura-bench's runner waits for its child without a
 * limit, so a deadlock would hang the whole benchmark. Every call a worker makes is bracketed
 * by btx_watch_enter/leave (a slot per thread holds the call's start time); a thread checks
 * the slots every WATCH_TICK_MS and, when a call has been running longer than its limit,
 * prints what was stuck and ends the process with _exit(3) (no atexit handlers, no close:
 * the engine's threads may hold its locks). The runner then reports the run as failed, "the
 * run's process exited with status 3 before it reported".
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench/txn/txn_int.h"
#include "util/status.h"

#define WATCH_TICK_MS 100

struct btx_watch {
    const char *workload;
    atomic_uint_fast64_t since[BTX_MAX_WORKERS]; /* 0: not in a call */
    atomic_bool stop;
    kthread tid;
};

static void *watch_main(void *arg)
{
    btx_watch *w = arg;
    while (!atomic_load(&w->stop)) {
        btx_sleep_ms(WATCH_TICK_MS);
        uint64_t now = know_ns();
        for (uint32_t i = 0; i < BTX_MAX_WORKERS; i++) {
            uint64_t t = atomic_load(&w->since[i]);
            uint64_t limit_s = i == 0 ? BTX_MAIN_STUCK_S : BTX_STUCK_S;
            /* t > now: the call began after this tick read the clock */
            if (t == 0 || t > now || now - t < limit_s * 1000000000ull) continue;
            fprintf(stderr,
                    "kura-bench: %s: %s %u has been in one call for %llu s (limit %llu s): "
                    "stuck, a deadlock? Giving up.\n",
                    w->workload, i == 0 ? "the main thread, slot" : "worker, slot", i,
                    (unsigned long long)((now - t) / 1000000000ull), (unsigned long long)limit_s);
            _exit(3);
        }
    }
    return NULL;
}

kura_status btx_watch_start(const char *workload, btx_watch **w_out)
{
    btx_watch *w = calloc(1, sizeof *w);
    if (!w) return kura_err(KURA_E_NOMEM, "watchdog");
    w->workload = workload;
    if (!kthread_start(&w->tid, watch_main, w)) {
        free(w);
        return kura_err(KURA_E_NOMEM, "cannot start the watchdog thread");
    }
    *w_out = w;
    return KURA_OK;
}

void btx_watch_enter(btx_watch *w, uint32_t slot)
{
    if (slot < BTX_MAX_WORKERS) atomic_store(&w->since[slot], know_ns());
}

void btx_watch_leave(btx_watch *w, uint32_t slot)
{
    if (slot < BTX_MAX_WORKERS) atomic_store(&w->since[slot], 0);
}

void btx_watch_stop(btx_watch *w)
{
    if (!w) return;
    atomic_store(&w->stop, true);
    kthread_join(w->tid);
    free(w);
}
