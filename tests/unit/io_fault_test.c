/*
 * io_fault_test.c - the fault env (util/io_fault.h): pass-through and counts, error-injection
 * rules (n-th op, op/kind masks, once or persistent, ENOSPC, short writes), sync poisoning,
 * files of a process that died in a power loss, and a thread-safety smoke test.
 * Crashes are tested in io_fault_crash_test.c, power loss in io_fault_loss_test.c.
 */
#define IO_FAULT_FIXTURE_TAG "io_fault"
#include "io_fault_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/io_fault.h"
#include "util/thread.h"

static void test_passthrough(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "a.sst");
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_SST, &f));
    assert_ptr_equal(f->env, fx->env);
    assert_int_equal(f->kind, IO_KIND_SST);
    assert_kura_ok(io_append(f, "abc", 3));
    assert_kura_ok(io_sync(f));
    uint64_t size;
    assert_kura_ok(io_file_size(f, &size));
    assert_int_equal(size, 3);
    assert_kura_ok(io_close(f));
    assert_int_equal(disk_size(p), 3);
    assert_kura_ok(io_open_read(fx->env, p, IO_KIND_SST, &f));
    char buf[8];
    size_t got;
    assert_kura_ok(io_read_at(f, 1, buf, sizeof buf, &got));
    assert_int_equal(got, 2);
    assert_memory_equal(buf, "bc", 2);
    assert_kura_ok(io_close(f));
    assert_kura_status(io_open_read(fx->env, "/nonexistent/x", IO_KIND_SST, &f),
                       KURA_E_NOT_FOUND);
    assert_kura_ok(io_crash_point(fx->env, "wal.after_append"));
    assert_int_equal(io_fault_point_hits(fx->fault, "wal.after_append"), 1);

    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_OPEN), 3);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_APPEND), 1);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_SYNC), 1);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_READ), 1);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_CLOSE), 2);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_SIZE), 1);
    assert_int_equal(io_fault_mutating_ops(fx->fault), 3); /* open_write, append, sync */
    io_fault_reset_counts(fx->fault);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_OPEN), 0);
    assert_int_equal(io_fault_mutating_ops(fx->fault), 0);
    assert_int_equal(io_fault_point_hits(fx->fault, "*"), 0);
    free(p);
}

/* Appends `count` one-byte records "0", "1", ... and returns how many succeeded. */
static int append_digits(io_file *f, int count, kura_status *statuses)
{
    int ok = 0;
    for (int i = 0; i < count; i++) {
        char c = (char)('0' + i);
        statuses[i] = io_append(f, &c, 1);
        ok += statuses[i] == KURA_OK;
    }
    return ok;
}

static void test_rule_nth_once(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "w.log");
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_WAL, &f));
    io_fault_rule r = {.at = 3, .op_mask = 1u << IO_OP_APPEND, .error = EIO};
    io_fault_set_rule(fx->fault, &r);
    kura_status st[5];
    assert_int_equal(append_digits(f, 5, st), 4);
    assert_int_equal(st[2], KURA_E_IO);
    assert_kura_ok(io_sync(f)); /* not matching: syncs are not appends */
    assert_int_equal(io_fault_matching_ops(fx->fault), 5);
    assert_int_equal(io_fault_injected(fx->fault), 1);
    assert_kura_ok(io_close(f));
    void *data;
    size_t n;
    assert_kura_ok(io_read_file(io_env_posix(), p, IO_KIND_WAL, 100, &data, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(data, "0134", 4); /* the failed append wrote nothing */
    free(data);

    /* the message says it was injected and names op and path */
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_WAL, &f));
    io_fault_set_rule(fx->fault, &r);
    assert_int_equal(io_fault_matching_ops(fx->fault), 0);
    append_digits(f, 3, st);
    assert_int_equal(st[2], KURA_E_IO);
    assert_msg_has("injected EIO");
    assert_msg_has("append");
    assert_msg_has(p);
    io_fault_set_rule(fx->fault, NULL);
    assert_kura_ok(io_append(f, "x", 1));
    assert_int_equal(io_fault_injected(fx->fault), 0);
    assert_kura_ok(io_close(f));
    free(p);
}

static void test_rule_persistent_enospc(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "t.sst");
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_SST, &f));
    io_fault_rule r = {.at = 2, .op_mask = 1u << IO_OP_APPEND, .error = ENOSPC,
                       .persistent = true};
    io_fault_set_rule(fx->fault, &r);
    kura_status st[5];
    assert_int_equal(append_digits(f, 5, st), 1);
    for (int i = 1; i < 5; i++)
        assert_int_equal(st[i], KURA_E_NOSPC);
    assert_msg_has("injected ENOSPC");
    assert_int_equal(io_fault_injected(fx->fault), 4);
    assert_int_equal(disk_size(p), 1);
    io_fault_set_rule(fx->fault, NULL);
    assert_kura_ok(io_append(f, "z", 1));
    assert_kura_ok(io_close(f));
    assert_int_equal(disk_size(p), 2);
    free(p);
}

static void test_rule_file_masks(void **state)
{
    fixture *fx = *state;
    char *wal = join(fx->dir, "1.log"), *sst = join(fx->dir, "1.sst");
    io_file *fw, *fs;
    assert_kura_ok(io_open_write(fx->env, wal, IO_KIND_WAL, &fw));
    assert_kura_ok(io_open_write(fx->env, sst, IO_KIND_SST, &fs));

    /* op and kind masks together: only WAL syncs */
    io_fault_rule r = {.at = 1, .op_mask = 1u << IO_OP_SYNC, .kind_mask = 1u << IO_KIND_WAL,
                       .error = EIO, .persistent = true};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_append(fs, "s", 1));
    assert_kura_ok(io_sync(fs));
    assert_kura_ok(io_append(fw, "w", 1));
    assert_kura_status(io_sync(fw), KURA_E_IO);
    assert_int_equal(io_fault_matching_ops(fx->fault), 1);

    /* op_mask 0: every operation on a WAL file, close included (which still frees) */
    r.op_mask = 0;
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_append(fs, "s", 1));
    uint64_t size;
    assert_kura_ok(io_file_size(fs, &size));
    assert_kura_status(io_file_size(fw, &size), KURA_E_IO);
    assert_kura_status(io_append(fw, "w", 1), KURA_E_IO);
    assert_kura_status(io_close(fw), KURA_E_IO);
    assert_kura_ok(io_close(fs));
    assert_int_equal(io_fault_injected(fx->fault), 3);
    assert_int_equal(disk_size(wal), 1);
    assert_int_equal(disk_size(sst), 2);
    free(wal);
    free(sst);
}

static void test_rule_path_kinds(void **state)
{
    fixture *fx = *state;
    char *wal = join(fx->dir, "1.log"), *sst = join(fx->dir, "1.sst");
    char *other = join(fx->dir, "other"), *moved = join(fx->dir, "moved");
    char *sub = join(fx->dir, "sub"), *lock = join(fx->dir, "LOCK");
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, wal, IO_KIND_WAL, &f));
    assert_kura_ok(io_close(f));
    assert_kura_ok(io_open_write(fx->env, sst, IO_KIND_SST, &f));
    assert_kura_ok(io_close(f));
    assert_kura_ok(io_open_write(io_env_posix(), other, IO_KIND_OTHER, &f)); /* unknown */
    assert_kura_ok(io_close(f));

    /* path operations take the kind the path was opened with, else OTHER */
    io_fault_rule r = {.at = 1,
                       .op_mask = (1u << IO_OP_RENAME) | (1u << IO_OP_UNLINK) | (1u << IO_OP_SIZE),
                       .kind_mask = 1u << IO_KIND_WAL,
                       .error = EIO,
                       .persistent = true};
    io_fault_set_rule(fx->fault, &r);
    uint64_t size;
    assert_kura_ok(io_rename(fx->env, other, moved));
    assert_kura_ok(io_path_size(fx->env, sst, &size));
    assert_kura_status(io_path_size(fx->env, wal, &size), KURA_E_IO);
    assert_kura_status(io_rename(fx->env, wal, other), KURA_E_IO);
    assert_msg_has("rename");
    assert_kura_status(io_unlink(fx->env, wal), KURA_E_IO);
    assert_int_equal(disk_size(wal), 0); /* the injected unlink did nothing */
    assert_kura_ok(io_unlink(fx->env, moved));

    /* directory operations are OTHER */
    r.op_mask = 1u << IO_OP_MKDIR;
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_mkdir(fx->env, sub));
    r.kind_mask = 1u << IO_KIND_OTHER;
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_rmdir(fx->env, sub));
    assert_kura_status(io_mkdir(fx->env, sub), KURA_E_IO);
    assert_int_equal(disk_size(sub), -1);

    /* lock is an open of kind LOCK */
    r.op_mask = 1u << IO_OP_OPEN;
    r.kind_mask = 1u << IO_KIND_LOCK;
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_open_read(fx->env, sst, IO_KIND_SST, &f));
    assert_kura_ok(io_close(f));
    assert_kura_status(io_lock(fx->env, lock, &f), KURA_E_IO);
    io_fault_set_rule(fx->fault, NULL);
    assert_kura_ok(io_lock(fx->env, lock, &f));
    assert_kura_ok(io_close(f));
    free(other);
    free(moved);
    free(wal);
    free(sst);
    free(sub);
    free(lock);
}

static void test_short_write(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "short.log");
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_WAL, &f));
    char buf[101];
    for (int i = 0; i < 101; i++)
        buf[i] = (char)i;
    io_fault_rule r = {.at = 1, .op_mask = 1u << IO_OP_APPEND, .error = IO_FAULT_SHORT_WRITE};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_status(io_append(f, buf, sizeof buf), KURA_E_IO);
    assert_msg_has("injected short write");
    uint64_t size;
    assert_kura_ok(io_file_size(f, &size));
    assert_int_equal(size, 50);
    assert_kura_ok(io_close(f));
    void *data;
    size_t n;
    assert_kura_ok(io_read_file(io_env_posix(), p, IO_KIND_WAL, 1000, &data, &n));
    assert_int_equal(n, 50);
    assert_memory_equal(data, buf, 50);
    free(data);
    /* on other ops it means EIO */
    r.op_mask = 1u << IO_OP_SYNC;
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_WAL, &f));
    assert_kura_status(io_sync(f), KURA_E_IO);
    assert_msg_has("injected EIO");
    assert_kura_ok(io_close(f));
    free(p);
}

static void test_sync_poisons(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "p.log");
    io_file *f;
    char a[100], b[60], c[40];
    memset(a, 'a', sizeof a), memset(b, 'b', sizeof b), memset(c, 'c', sizeof c);
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_WAL, &f));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_kura_ok(io_append(f, a, sizeof a));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_append(f, b, sizeof b));
    io_fault_rule r = {.at = 1, .op_mask = 1u << IO_OP_SYNC, .error = EIO};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_status(io_sync(f), KURA_E_IO);
    assert_msg_has("injected");
    io_fault_set_rule(fx->fault, NULL);
    assert_kura_ok(io_append(f, c, sizeof c));
    assert_kura_ok(io_sync(f)); /* succeeds, but durability stays where the failure left it */
    assert_kura_ok(io_close(f));
    assert_int_equal(disk_size(p), 200);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_int_equal(disk_size(p), 100);
    free(p);
}

/* ---- crashes ---- */

static void test_dead_files(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "x.log"), *lock = join(fx->dir, "LOCK");
    io_file *f, *l, *l2;
    assert_kura_ok(io_lock(fx->env, lock, &l));
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_WAL, &f));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_kura_ok(io_append(f, "abc", 3));
    assert_kura_status(io_lock(fx->env, lock, &l2), KURA_E_BUSY);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 3);
    assert_kura_status(io_append(f, "d", 1), KURA_E_IO);
    assert_msg_has("power loss");
    assert_kura_status(io_sync(f), KURA_E_IO);
    uint64_t size;
    assert_kura_status(io_file_size(f, &size), KURA_E_IO);
    char buf[4];
    size_t got;
    assert_kura_status(io_read_at(f, 0, buf, 1, &got), KURA_E_IO);
    assert_kura_ok(io_lock(fx->env, lock, &l2)); /* the dead process's lock is released */
    assert_kura_ok(io_close(f));
    assert_kura_ok(io_close(l));
    assert_kura_ok(io_close(l2));
    assert_int_equal(disk_size(p), 0);
    free(p);
    free(lock);
}

typedef struct writer_arg {
    io_env *env;
    char *path;
    kura_status status;
} writer_arg;

#define T_APPENDS 205
#define T_RECORD 64

static void *writer_main(void *p)
{
    writer_arg *a = p;
    char rec[T_RECORD];
    memset(rec, a->path[strlen(a->path) - 1], sizeof rec);
    io_file *f;
    if ((a->status = io_open_write(a->env, a->path, IO_KIND_WAL, &f)) != KURA_OK)
        return NULL;
    for (int i = 1; i <= T_APPENDS && a->status == KURA_OK; i++) {
        a->status = io_append(f, rec, sizeof rec);
        if (a->status == KURA_OK && i % 10 == 0)
            a->status = io_sync(f);
        if (a->status == KURA_OK && i % 50 == 0)
            a->status = io_crash_point(a->env, "wal.after_sync");
    }
    kura_status s = io_close(f);
    if (a->status == KURA_OK)
        a->status = s;
    return NULL;
}

static void test_threads(void **state)
{
    fixture *fx = *state;
    writer_arg args[4];
    kthread th[4];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        args[i] = (writer_arg){.env = fx->env, .path = join(fx->dir, name)};
        assert_true(kthread_start(&th[i], writer_main, &args[i]));
    }
    for (int i = 0; i < 4; i++)
        kthread_join(th[i]);
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    for (int i = 0; i < 4; i++) {
        assert_kura_ok(args[i].status);
        assert_int_equal(disk_size(args[i].path), T_APPENDS * T_RECORD);
    }
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_APPEND), 4 * T_APPENDS);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_SYNC), 4 * (T_APPENDS / 10));
    assert_int_equal(io_fault_point_hits(fx->fault, "wal.after_sync"), 4 * (T_APPENDS / 50));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 11);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(disk_size(args[i].path), T_APPENDS / 10 * 10 * T_RECORD);
        free(args[i].path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_passthrough, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_nth_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_persistent_enospc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_file_masks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_path_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_poisons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
