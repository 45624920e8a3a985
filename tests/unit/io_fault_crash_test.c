/*
 * io_fault_crash_test.c - crashes of the fault env (util/io_fault.h): crash points with FREEZE
 * (later operations fail, close still works, power loss revives the env) and EXIT (in a forked
 * child: exit status 137 and the files as the OS left them), and crash_at_op: counting the
 * mutating operations of a workload and cutting before each of them.
 */
#define IO_FAULT_FIXTURE_TAG "io_fault_crash"
#include "io_fault_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/io_fault.h"
#include "util/thread.h"

static void test_crash_point_freeze(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "f.log"), *q = join(fx->dir, "g.log");
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_WAL, &f));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_kura_ok(io_append(f, "12345", 5));
    assert_kura_ok(io_sync(f));
    io_fault_crash_at(fx->fault, "wal.after_sync", 2, IO_CRASH_FREEZE);
    assert_kura_ok(io_crash_point(fx->env, "wal.after_sync"));
    assert_kura_ok(io_crash_point(fx->env, "flush.after_table")); /* other names don't count */
    assert_false(io_fault_crashed(fx->fault));
    assert_kura_status(io_crash_point(fx->env, "wal.after_sync"), KURA_E_IO);
    assert_msg_has("simulated crash at wal.after_sync");
    assert_true(io_fault_crashed(fx->fault));
    uint64_t before = io_fault_op_count(fx->fault, IO_OP_APPEND);
    assert_kura_status(io_append(f, "678", 3), KURA_E_IO);
    assert_msg_has("simulated crash at wal.after_sync");
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_APPEND), before); /* refused: uncounted */
    io_file *g = NULL;
    assert_kura_status(io_open_write(fx->env, q, IO_KIND_WAL, &g), KURA_E_IO);
    assert_null(g);
    assert_kura_status(io_sync_dir(fx->env, fx->dir), KURA_E_IO);
    assert_kura_status(io_crash_point(fx->env, "wal.after_sync"), KURA_E_IO);
    assert_int_equal(disk_size(p), 5); /* nothing more reached the disk */
    assert_int_equal(disk_size(q), -1);
    assert_kura_status(io_close(f), KURA_E_IO); /* still frees (ASan checks) */
    assert_int_equal(io_fault_point_hits(fx->fault, "wal.after_sync"), 2);
    assert_int_equal(io_fault_point_hits(fx->fault, "*"), 3);

    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 7);
    assert_false(io_fault_crashed(fx->fault));
    assert_int_equal(disk_size(p), 5);
    assert_kura_ok(io_open_write(fx->env, q, IO_KIND_WAL, &g)); /* usable for the reopen */
    assert_kura_ok(io_close(g));

    /* "*" matches every point */
    io_fault_crash_at(fx->fault, "*", 2, IO_CRASH_FREEZE);
    assert_kura_ok(io_crash_point(fx->env, "a"));
    assert_kura_status(io_crash_point(fx->env, "b"), KURA_E_IO);
    assert_msg_has("simulated crash at b");
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 7);
    free(p);
    free(q);
}

/* Runs `child` in a forked process and returns its exit status (-1 if not a normal exit). */
static int run_child(void (*child)(const char *dir), const char *dir)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        child(dir);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#define CHILD_CHECK(expr)                                                                      \
    do {                                                                                       \
        if ((expr) != KURA_OK)                                                                 \
            _exit(1);                                                                          \
    } while (0)

static void child_crash_point(const char *dir)
{
    io_fault *fault = io_fault_new(io_env_posix());
    io_env *env = io_fault_env(fault);
    char *p = join(dir, "c.log"), *marker = join(dir, "marker");
    io_file *f;
    CHILD_CHECK(io_open_write(env, p, IO_KIND_WAL, &f));
    CHILD_CHECK(io_append(f, "durable", 7));
    CHILD_CHECK(io_sync(f));
    CHILD_CHECK(io_append(f, "+os", 3)); /* unsynced, but the OS keeps it after _exit */
    io_fault_crash_at(fault, "wal.after_append", 1, IO_CRASH_EXIT);
    io_crash_point(env, "wal.after_append"); /* never returns */
    io_file *m;
    io_open_write(env, marker, IO_KIND_OTHER, &m);
    _exit(2);
}

static void child_crash_at_op(const char *dir)
{
    io_fault *fault = io_fault_new(io_env_posix());
    io_env *env = io_fault_env(fault);
    char *p = join(dir, "d.log");
    io_file *f;
    io_fault_crash_at_op(fault, 4, IO_CRASH_EXIT);
    CHILD_CHECK(io_open_write(env, p, IO_KIND_WAL, &f)); /* 1 */
    CHILD_CHECK(io_append(f, "one", 3));                 /* 2 */
    CHILD_CHECK(io_append(f, "two", 3));                 /* 3 */
    io_append(f, "three", 5);                            /* 4: exits before */
    _exit(2);
}

static void test_crash_exit(void **state)
{
    fixture *fx = *state;
    assert_int_equal(run_child(child_crash_point, fx->dir), 137);
    char *p = join(fx->dir, "c.log"), *marker = join(fx->dir, "marker");
    void *data;
    size_t n;
    assert_kura_ok(io_read_file(io_env_posix(), p, IO_KIND_WAL, 100, &data, &n));
    assert_int_equal(n, 10);
    assert_memory_equal(data, "durable+os", 10);
    free(data);
    assert_int_equal(disk_size(marker), -1);

    assert_int_equal(run_child(child_crash_at_op, fx->dir), 137);
    char *d = join(fx->dir, "d.log");
    assert_kura_ok(io_read_file(io_env_posix(), d, IO_KIND_WAL, 100, &data, &n));
    assert_int_equal(n, 6);
    assert_memory_equal(data, "onetwo", 6);
    free(data);
    free(d);
    free(p);
    free(marker);
}

/* The workload of test_crash_at_op: 8 mutating operations. Returns how many succeeded before
 * the first failure. */
static int cut_workload(io_env *env, const char *dir, const char *f_path, const char *g_path)
{
    char a[100], b[100];
    memset(a, 'A', sizeof a), memset(b, 'B', sizeof b);
    io_file *f = NULL;
    int done = 0;
    if (io_open_write(env, f_path, IO_KIND_WAL, &f) != KURA_OK)
        return done;
    kura_status s = KURA_OK;
    if (++done && (s = io_sync_dir(env, dir)) == KURA_OK && ++done &&
        (s = io_append(f, a, sizeof a)) == KURA_OK && ++done && (s = io_sync(f)) == KURA_OK &&
        ++done && (s = io_append(f, b, sizeof b)) == KURA_OK && ++done &&
        (s = io_sync(f)) == KURA_OK && ++done && (s = io_unlink(env, g_path)) == KURA_OK &&
        ++done && (s = io_sync_dir(env, dir)) == KURA_OK)
        done++;
    io_close(f);
    return done;
}

static void test_crash_at_op(void **state)
{
    fixture *fx = *state;
    char *f_path = join(fx->dir, "f.log"), *g_path = join(fx->dir, "g.old");
    io_file *g;
    assert_kura_ok(io_open_write(io_env_posix(), g_path, IO_KIND_OTHER, &g));
    assert_kura_ok(io_append(g, "g", 1));
    assert_kura_ok(io_close(g));

    /* one clean run counts the cut points */
    assert_int_equal(cut_workload(fx->env, fx->dir, f_path, g_path), 8);
    assert_int_equal(io_fault_mutating_ops(fx->fault), 8);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_APPEND), 2);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_SYNC_DIR), 2);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_UNLINK), 1);
    assert_int_equal(disk_size(f_path), 200);
    assert_int_equal(disk_size(g_path), -1);

    /* expected f size after the cut before op k (index k), -1 = absent */
    static const int64_t want_f[] = {0, -1, -1, 0, 0, 100, 100, 200, 200};
    for (int k = 1; k <= 8; k++) {
        kura_status us = io_unlink(io_env_posix(), f_path);
        assert_true(us == KURA_OK || us == KURA_E_NOT_FOUND);
        assert_kura_ok(io_open_write(io_env_posix(), g_path, IO_KIND_OTHER, &g));
        assert_kura_ok(io_append(g, "g", 1));
        assert_kura_ok(io_close(g));
        io_fault_reset_counts(fx->fault);
        io_fault_crash_at_op(fx->fault, (uint64_t)k, IO_CRASH_FREEZE);
        int done = cut_workload(fx->env, fx->dir, f_path, g_path);
        if (done != k - 1)
            fail_msg("crash before op %d: %d ops succeeded", k, done);
        assert_true(io_fault_crashed(fx->fault));
        assert_msg_has("simulated crash at mutating op #");
        assert_int_equal(io_fault_mutating_ops(fx->fault), k);
        io_fault_power_loss(fx->fault, IO_LOSS_DROP, (uint64_t)k);
        if (disk_size(f_path) != want_f[k])
            fail_msg("crash before op %d: f has %lld bytes, want %lld", k,
                     (long long)disk_size(f_path), (long long)want_f[k]);
        assert_int_equal(disk_size(g_path), 1); /* the unlink never became durable */
    }
    free(f_path);
    free(g_path);
}

/* After a power loss, handles of the dead process fail but close; their locks are gone. */
typedef struct crash_writer {
    io_env *env;
    char *path;
    int appended;        /* successful appends */
    bool saw_crash;      /* the first failure was the simulated crash */
} crash_writer;

/* Appends 64-byte records, syncing and passing "wal.after_sync" every 10, until a failure. */
static void *crash_writer_main(void *p)
{
    crash_writer *w = p;
    char rec[64];
    memset(rec, 'r', sizeof rec);
    io_file *f = NULL; /* the open fails if another thread has crashed the process first */
    kura_status s = io_open_write(w->env, w->path, IO_KIND_WAL, &f);
    while (s == KURA_OK && w->appended < 100000) {
        if ((s = io_append(f, rec, sizeof rec)) != KURA_OK)
            break;
        if (++w->appended % 10 == 0 && (s = io_sync(f)) == KURA_OK)
            s = io_crash_point(w->env, "wal.after_sync");
    }
    w->saw_crash = s == KURA_E_IO && strstr(kura_last_error(), "simulated crash at");
    if (f && s != KURA_OK)
        io_close(f);
    return NULL;
}

/* A FREEZE crash while 4 threads append and sync: every thread stops with the crash, and what
 * survives the power loss is each file's synced prefix (a whole number of 10-record syncs). */
static void test_crash_under_threads(void **state)
{
    fixture *fx = *state;
    crash_writer w[4];
    kthread th[4];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d.log", i);
        w[i] = (crash_writer){.env = fx->env, .path = join(fx->dir, name)};
        io_file *f;
        assert_kura_ok(io_open_write(fx->env, w[i].path, IO_KIND_WAL, &f));
        assert_kura_ok(io_close(f));
    }
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    io_fault_crash_at(fx->fault, "wal.after_sync", 25, IO_CRASH_FREEZE);
    for (int i = 0; i < 4; i++)
        assert_true(kthread_start(&th[i], crash_writer_main, &w[i]));
    for (int i = 0; i < 4; i++)
        kthread_join(th[i]);
    assert_true(io_fault_crashed(fx->fault));
    assert_int_equal(io_fault_point_hits(fx->fault, "wal.after_sync"), 25);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 5);
    int64_t total_syncs = 0;
    for (int i = 0; i < 4; i++) {
        assert_true(w[i].saw_crash);
        int64_t size = disk_size(w[i].path);
        if (size % 640 || size > (int64_t)w[i].appended * 64)
            fail_msg("%s: %lld bytes after the power loss, %d records appended", w[i].path,
                     (long long)size, w[i].appended);
        total_syncs += size / 640;
        free(w[i].path);
    }
    /* 25 passages = 25 syncs completed (the 25th froze after its sync); each other thread may
     * have completed one more sync that had not reached its crash point yet */
    if (total_syncs < 25 || total_syncs > 28)
        fail_msg("%lld syncs survived, want 25..28", (long long)total_syncs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crash_point_freeze, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_at_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_under_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
