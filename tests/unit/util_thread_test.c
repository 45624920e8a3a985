/*
 * util_thread_test.c - util/thread.h's scheduler slice: kthread_set_slice() keeps the thread's
 * nice value and policy, and where the kernel honours custom slices (6.12 and later) the
 * thread's slice is the one asked for, as /proc shows it.
 */
#include "testutil.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/thread.h"

/* The thread's current slice from /proc/thread-self/sched (kernels 6.6+), or 0 if not shown. */
static uint64_t shown_slice(void)
{
    FILE *f = fopen("/proc/thread-self/sched", "r");
    if (!f) return 0;
    char line[256];
    uint64_t slice = 0;
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "se.slice ", 9) == 0 && colon) slice = strtoull(colon + 1, NULL, 10);
    }
    fclose(f);
    return slice;
}

/* Whether the running kernel is at least major.minor. */
static bool kernel_at_least(int major, int minor)
{
    struct utsname u;
    int ma = 0, mi = 0;
    if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2) return false;
    return ma > major || (ma == major && mi >= minor);
}

typedef struct outcome {
    bool reniced, set;
    int nice_after;
    int policy_after;
    uint64_t slice_after;
} outcome;

/* Runs fn in a thread of its own (so the test's main thread keeps its nice value and slice)
 * and returns what it recorded. */
static outcome run_in_thread(void *(*fn)(void *))
{
    outcome o = {0};
    kthread t;
    assert_true(kthread_start(&t, fn, &o));
    kthread_join(t);
    return o;
}

static void *set_reniced(void *arg)
{
    outcome *o = arg;
    /* raising one's nice value needs no privilege */
    o->reniced = setpriority(PRIO_PROCESS, (id_t)gettid(), 5) == 0;
    o->set = kthread_set_slice(300000);
    o->nice_after = getpriority(PRIO_PROCESS, (id_t)gettid());
    o->policy_after = sched_getscheduler(0);
    o->slice_after = shown_slice();
    return NULL;
}

static void test_set_slice_keeps_nice_and_policy(void **state)
{
    (void)state;
    outcome o = run_in_thread(set_reniced);
    assert_true(o.reniced);
    assert_true(o.set);
    assert_int_equal(o.nice_after, 5);
    assert_int_equal(o.policy_after, SCHED_OTHER);
    if (kernel_at_least(6, 12)) assert_int_equal(o.slice_after, 300000);
}

static void *set_twice(void *arg)
{
    outcome *o = arg;
    o->set = kthread_set_slice(300000) && kthread_set_slice(2000000);
    o->slice_after = shown_slice();
    return NULL;
}

/* A second call replaces the first slice. */
static void test_set_slice_again_replaces_it(void **state)
{
    (void)state;
    outcome o = run_in_thread(set_twice);
    assert_true(o.set);
    if (kernel_at_least(6, 12)) assert_int_equal(o.slice_after, 2000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_slice_keeps_nice_and_policy),
        cmocka_unit_test(test_set_slice_again_replaces_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
