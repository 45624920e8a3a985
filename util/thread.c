/*
 * thread.c - condition variables on the monotonic clock, thread start, the scheduler's slice.
 */
#include "util/thread.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

void kcond_init(kcond *c)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(c, &attr);
    pthread_condattr_destroy(&attr);
}

bool kcond_timedwait(kcond *c, kmutex *m, uint64_t timeout_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    return pthread_cond_timedwait(c, m, &ts) == 0;
}

bool kthread_start(kthread *t, void *(*fn)(void *), void *arg)
{
    return pthread_create(t, NULL, fn, arg) == 0;
}

/* struct sched_attr as sched_setattr(2) takes it (its first version, 48 bytes). glibc has no
 * wrapper, and <linux/sched/types.h> clashes with <sched.h> over struct sched_param. */
struct slice_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime; /* for SCHED_OTHER and SCHED_BATCH: the slice, in ns */
    uint64_t sched_deadline;
    uint64_t sched_period;
};

bool kthread_set_slice(uint64_t slice_ns)
{
    pid_t tid = gettid();
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)tid); /* -1 is also a valid nice value */
    if (nice == -1 && errno != 0) return false;
    struct slice_attr attr = {
        .size = sizeof attr,
        .sched_policy = (uint32_t)sched_getscheduler(tid),
        .sched_nice = nice,
        .sched_runtime = slice_ns,
    };
    if (attr.sched_policy != SCHED_OTHER && attr.sched_policy != SCHED_BATCH) return false;
    return syscall(SYS_sched_setattr, tid, &attr, 0u) == 0;
}
