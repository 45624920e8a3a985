/*
 * thread.h - thin wrappers over pthreads: mutexes, condition variables with timeouts, threads,
 * and a monotonic clock. Failures of pthread calls on valid objects are programmer errors.
 */
#ifndef KURA_UTIL_THREAD_H
#define KURA_UTIL_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef pthread_mutex_t kmutex;
typedef pthread_cond_t kcond;

static inline void kmutex_init(kmutex *m)
{
    pthread_mutex_init(m, NULL);
}
static inline void kmutex_destroy(kmutex *m)
{
    pthread_mutex_destroy(m);
}
static inline void kmutex_lock(kmutex *m)
{
    pthread_mutex_lock(m);
}
static inline void kmutex_unlock(kmutex *m)
{
    pthread_mutex_unlock(m);
}

/* Condition variables use CLOCK_MONOTONIC, so timed waits ignore wall-clock jumps. */
void kcond_init(kcond *c);
static inline void kcond_destroy(kcond *c)
{
    pthread_cond_destroy(c);
}
static inline void kcond_wait(kcond *c, kmutex *m)
{
    pthread_cond_wait(c, m);
}
/* Waits at most timeout_ns; returns false on timeout. */
bool kcond_timedwait(kcond *c, kmutex *m, uint64_t timeout_ns);
static inline void kcond_signal(kcond *c)
{
    pthread_cond_signal(c);
}
static inline void kcond_broadcast(kcond *c)
{
    pthread_cond_broadcast(c);
}

/* Monotonic time in nanoseconds. */
static inline uint64_t know_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wall-clock time in milliseconds since the epoch (CLOCK_REALTIME): the times users see. */
static inline uint64_t kwall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

typedef pthread_t kthread;
/* Starts fn(arg) in a new thread; returns false if the thread could not be created. */
bool kthread_start(kthread *t, void *(*fn)(void *), void *arg);
static inline void kthread_join(kthread t)
{
    pthread_join(t, NULL);
}

/* Asks the scheduler to give the calling thread time slices of slice_ns (Linux's EEVDF
 * scheduler, 6.6 and later, honours a custom slice from 6.12; it clamps it to 0.1-100 ms).
 * Under EEVDF a shorter slice means an earlier virtual deadline: when such a thread wakes, it
 * is run ahead of (and may preempt) threads on the default slice, without a higher priority
 * or any privilege; its share of the CPU stays what its nice value gives it. The thread's
 * policy and nice value are kept. Returns false if the kernel refused (older kernels accept
 * the call and ignore the slice); the thread then runs as before. */
bool kthread_set_slice(uint64_t slice_ns);

#endif
