/*
 * io_fault_prealloc_test.c - prealloc (util/io.h) on the POSIX env and in the fault env.
 *
 * POSIX: the zeros go past the end and the append position stays, so appends overwrite them.
 * Fault env (util/io_fault_ops.c, io_fault_loss.c): a prealloc is one IO_OP_APPEND for rules,
 * counts and crash_at_op; a failed one poisons the file; a power loss turns the unsynced tail
 * back into zeros below the durable end of the zeros and truncates it past that end.
 * Everything is checked on the real disk through the POSIX env.
 */
#define IO_FAULT_FIXTURE_TAG "io_fault_prealloc"
#include "io_fault_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/io_fault.h"
#include "util/status.h"

/* Asserts path holds exactly want[0, n) followed by zeros up to `size` bytes. */
static void assert_data_then_zeros(const char *path, const char *want, size_t n, size_t size)
{
    size_t got_n;
    char *got = disk_read(path, &got_n);
    if (got_n != size)
        fail_msg("%s has %zu bytes, want %zu", path, got_n, size);
    for (size_t i = 0; i < size; i++)
        if (got[i] != (i < n ? want[i] : 0))
            fail_msg("%s: byte %zu is %d, want %d", path, i, got[i], i < n ? want[i] : 0);
    free(got);
}

/* Creates path through env, durably (directory synced). */
static io_file *create(io_env *env, const char *dir, const char *path)
{
    io_file *f;
    assert_kura_ok(io_open_write(env, path, IO_KIND_WAL, &f));
    assert_kura_ok(io_sync_dir(env, dir));
    return f;
}

/* Bytes never 0, so zeros show where data was lost. */
static void fill(char *buf, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)(1 + test_rand(&seed) % 255);
}

static void test_posix_keeps_position(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "px.log");
    char data[1200];
    fill(data, sizeof data, 1);
    io_file *f = create(io_env_posix(), fx->dir, p);
    assert_kura_ok(io_append(f, data, 3));
    assert_kura_ok(io_prealloc(f, 1000));
    uint64_t size;
    assert_kura_ok(io_file_size(f, &size));
    assert_int_equal(size, 1003);
    assert_data_then_zeros(p, data, 3, 1003);
    /* appends overwrite the zeros at the old end; the size stays while they fit */
    assert_kura_ok(io_append(f, data + 3, 100));
    assert_kura_ok(io_sync(f));
    assert_data_then_zeros(p, data, 103, 1003);
    /* a second prealloc starts at the file's end, not at the append position */
    assert_kura_ok(io_prealloc(f, 500));
    assert_data_then_zeros(p, data, 103, 1503);
    assert_kura_ok(io_append(f, data + 103, 1097));
    assert_data_then_zeros(p, data, 1200, 1503);
    /* past the zeros the file grows again */
    assert_kura_ok(io_append(f, data, 400));
    assert_kura_ok(io_close(f));
    assert_int_equal(disk_size(p), 1600);
    free(p);
}

static void test_drop_keeps_zeros(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "a.log");
    char data[700];
    fill(data, sizeof data, 2);
    io_file *f = create(fx->env, fx->dir, p);
    assert_kura_ok(io_append(f, data, 100));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_prealloc(f, 4096));
    assert_kura_ok(io_append(f, data + 100, 300));
    assert_kura_ok(io_sync(f)); /* a sync after prealloc makes [0, len) durable */
    assert_kura_ok(io_append(f, data + 400, 300));
    assert_data_then_zeros(p, data, 700, 4196);

    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1); /* f still open */
    assert_data_then_zeros(p, data, 400, 4196);
    assert_kura_ok(io_close(f));
    /* the reopened file shows the zeros; everything on disk now counts as durable */
    io_file *r;
    char buf[4200];
    size_t got;
    assert_kura_ok(io_open_read(fx->env, p, IO_KIND_WAL, &r));
    assert_kura_ok(io_read_at(r, 0, buf, sizeof buf, &got));
    assert_int_equal(got, 4196);
    assert_memory_equal(buf, data, 400);
    for (size_t i = 400; i < got; i++)
        assert_int_equal(buf[i], 0);
    assert_kura_ok(io_close(r));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 2);
    assert_data_then_zeros(p, data, 400, 4196);

    /* nothing synced but the zeros: all data reverts to zeros, the size stays */
    f = create(fx->env, fx->dir, p);
    assert_kura_ok(io_prealloc(f, 1000));
    assert_kura_ok(io_append(f, data, 700));
    assert_kura_ok(io_close(f));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 3);
    assert_data_then_zeros(p, data, 0, 1000);
    free(p);
}

#define TEAR_SYNCED 1000
#define TEAR_TOTAL 4000
#define TEAR_ZEROS 8192

/* After a torn power loss the file keeps its full size, its synced prefix, a prefix of the
 * unsynced bytes (the cut's sector possibly overwritten), and zeros after the cut. */
static void test_tear_between(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "t.log");
    char orig[TEAR_TOTAL];
    fill(orig, sizeof orig, 3);
    size_t cuts[64], distinct = 0;
    bool partial = false;
    for (uint64_t seed = 0; seed < 64; seed++) {
        io_file *f = create(fx->env, fx->dir, p);
        assert_kura_ok(io_append(f, orig, TEAR_SYNCED));
        assert_kura_ok(io_sync(f));
        assert_kura_ok(io_prealloc(f, TEAR_ZEROS));
        assert_kura_ok(io_append(f, orig + TEAR_SYNCED, TEAR_TOTAL - TEAR_SYNCED));
        assert_kura_ok(io_close(f));
        io_fault_power_loss(fx->fault, IO_LOSS_TEAR, seed);
        size_t n;
        char *got = disk_read(p, &n);
        assert_int_equal(n, TEAR_SYNCED + TEAR_ZEROS);
        size_t match = 0, zeros_from = n;
        while (match < TEAR_TOTAL && got[match] == orig[match])
            match++;
        while (zeros_from > 0 && got[zeros_from - 1] == 0)
            zeros_from--;
        /* data up to the cut's sector, at most that sector overwritten, zeros from the cut */
        size_t sector = zeros_from / 512 * 512;
        if (match < TEAR_SYNCED || zeros_from > TEAR_TOTAL || match > zeros_from ||
            match < (sector > TEAR_SYNCED ? sector : TEAR_SYNCED))
            fail_msg("seed %llu: intact prefix %zu, zeros from %zu", (unsigned long long)seed,
                     match, zeros_from);
        partial = partial || (match > TEAR_SYNCED && match < TEAR_TOTAL);
        bool dup = false;
        for (size_t j = 0; j < distinct; j++)
            dup = dup || cuts[j] == zeros_from;
        if (!dup)
            cuts[distinct++] = zeros_from;
        free(got);
    }
    assert_true(distinct >= 32);
    assert_true(partial);
    free(p);
}

/* Appends past the durable zeros grow the file; a power loss keeps the zeros' size and cuts
 * what lies past it. */
static void test_grow_past_zeros(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "g.log");
    char data[600];
    fill(data, sizeof data, 4);
    io_file *f = create(fx->env, fx->dir, p);
    assert_kura_ok(io_append(f, data, 100));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_prealloc(f, 200)); /* zeros up to 300 */
    assert_kura_ok(io_append(f, data + 100, 150));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_append(f, data + 250, 150)); /* len 400, past the zeros */
    assert_int_equal(disk_size(p), 400);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_data_then_zeros(p, data, 250, 300);
    assert_kura_ok(io_close(f));

    /* synced past the zeros: those bytes stay, the unsynced rest goes */
    f = create(fx->env, fx->dir, p);
    assert_kura_ok(io_prealloc(f, 300));
    assert_kura_ok(io_append(f, data, 400));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_append(f, data + 400, 100));
    assert_kura_ok(io_close(f));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 2);
    assert_data_then_zeros(p, data, 400, 400);

    /* a prealloc past unsynced appends starts at their end; they turn into zeros */
    f = create(fx->env, fx->dir, p);
    assert_kura_ok(io_append(f, data, 100));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_prealloc(f, 100)); /* zeros 100..200 */
    assert_kura_ok(io_append(f, data + 100, 200)); /* len 300 */
    assert_kura_ok(io_prealloc(f, 250)); /* zeros 300..550 */
    assert_data_then_zeros(p, data, 300, 550);
    assert_kura_ok(io_append(f, data + 300, 300)); /* len 600 */
    assert_kura_ok(io_close(f));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 3);
    assert_data_then_zeros(p, data, 100, 550);

    /* TEAR past the zeros: the size is max(cut, end of zeros) */
    for (uint64_t seed = 0; seed < 32; seed++) {
        f = create(fx->env, fx->dir, p);
        assert_kura_ok(io_append(f, data, 100));
        assert_kura_ok(io_sync(f));
        assert_kura_ok(io_prealloc(f, 200));
        assert_kura_ok(io_append(f, data + 100, 500)); /* len 600 */
        assert_kura_ok(io_close(f));
        io_fault_power_loss(fx->fault, IO_LOSS_TEAR, seed);
        int64_t size = disk_size(p);
        if (size < 300 || size > 600)
            fail_msg("seed %llu: %lld bytes", (unsigned long long)seed, (long long)size);
        size_t n;
        char *got = disk_read(p, &n);
        assert_memory_equal(got, data, 100);
        free(got);
    }
    free(p);
}

/* A prealloc is one IO_OP_APPEND for rules; failing it writes nothing and poisons the file. */
static void test_rule_fails_prealloc(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "r.log");
    char data[300];
    fill(data, sizeof data, 5);
    io_file *f = create(fx->env, fx->dir, p);
    io_fault_reset_counts(fx->fault);
    /* a sync rule or a rule for another kind does not see it */
    io_fault_rule r = {.at = 1, .op_mask = 1u << IO_OP_SYNC, .error = EIO, .persistent = true};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_prealloc(f, 100));
    r = (io_fault_rule){.at = 1, .op_mask = 1u << IO_OP_APPEND,
                        .kind_mask = 1u << IO_KIND_SST, .error = EIO, .persistent = true};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_prealloc(f, 100));
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_APPEND), 2);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_SYNC), 0);
    assert_int_equal(io_fault_mutating_ops(fx->fault), 2);
    assert_int_equal(disk_size(p), 200);

    /* the 2nd append-type op of a WAL fails: the prealloc */
    r = (io_fault_rule){.at = 2, .op_mask = 1u << IO_OP_APPEND, .kind_mask = 1u << IO_KIND_WAL,
                        .error = ENOSPC};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_ok(io_append(f, data, 100));
    assert_kura_ok(io_sync(f));
    assert_kura_status(io_prealloc(f, 1000), KURA_E_NOSPC);
    if (!strstr(kura_last_error(), "prealloc") || !strstr(kura_last_error(), "injected"))
        fail_msg("message: %s", kura_last_error());
    assert_int_equal(io_fault_injected(fx->fault), 1);
    assert_int_equal(disk_size(p), 200); /* no zero written */
    /* poisoned: neither later syncs nor later preallocs become durable */
    io_fault_set_rule(fx->fault, NULL);
    assert_kura_ok(io_append(f, data + 100, 200));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_prealloc(f, 1000));
    assert_int_equal(disk_size(p), 1300); /* the zeros start at the end, 300 */
    assert_kura_ok(io_close(f));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_data_then_zeros(p, data, 100, 200);

    /* a short-write rule fails a prealloc whole, as EIO */
    f = create(fx->env, fx->dir, p);
    r = (io_fault_rule){.at = 1, .op_mask = 1u << IO_OP_APPEND, .error = IO_FAULT_SHORT_WRITE};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_status(io_prealloc(f, 1000), KURA_E_IO);
    assert_int_equal(disk_size(p), 0);
    assert_kura_ok(io_close(f));
    free(p);
}

/* crash_at_op counts a prealloc as one cut point; the cut falls wholly before or after it. */
static int prealloc_workload(fixture *fx, const char *p, const char *a, const char *b)
{
    io_file *f;
    if (io_open_write(fx->env, p, IO_KIND_WAL, &f) != KURA_OK)
        return 0;
    int done = 1;
    for (int step = 0; step < 6; step++) {
        kura_status s;
        if (step == 0)
            s = io_sync_dir(fx->env, fx->dir);
        else if (step == 1)
            s = io_append(f, a, 100);
        else if (step == 3)
            s = io_prealloc(f, 1000);
        else if (step == 4)
            s = io_append(f, b, 50);
        else
            s = io_sync(f); /* steps 2 and 5 */
        if (s != KURA_OK)
            break;
        done++;
    }
    io_close(f);
    return done;
}

static void test_crash_at_op(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "c.log");
    char data[150];
    fill(data, sizeof data, 6);
    io_fault_reset_counts(fx->fault);
    assert_int_equal(prealloc_workload(fx, p, data, data + 100), 7);
    assert_int_equal(io_fault_mutating_ops(fx->fault), 7);
    assert_int_equal(io_fault_op_count(fx->fault, IO_OP_APPEND), 3);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 0);
    assert_data_then_zeros(p, data, 150, 1100);

    /* after the cut before op k: file size (-1 absent) and data bytes, then zeros */
    static const int64_t want_size[] = {0, -1, -1, 0, 0, 100, 1100, 1100};
    static const size_t want_data[] = {0, 0, 0, 0, 0, 100, 100, 100};
    for (int k = 1; k <= 7; k++) {
        kura_status us = io_unlink(io_env_posix(), p);
        assert_true(us == KURA_OK || us == KURA_E_NOT_FOUND);
        io_fault_reset_counts(fx->fault);
        io_fault_crash_at_op(fx->fault, (uint64_t)k, IO_CRASH_FREEZE);
        int done = prealloc_workload(fx, p, data, data + 100);
        if (done != k - 1)
            fail_msg("crash before op %d: %d ops succeeded", k, done);
        assert_true(io_fault_crashed(fx->fault));
        io_fault_power_loss(fx->fault, IO_LOSS_DROP, (uint64_t)k);
        if (disk_size(p) != want_size[k])
            fail_msg("crash before op %d: %lld bytes, want %lld", k, (long long)disk_size(p),
                     (long long)want_size[k]);
        if (want_size[k] >= 0)
            assert_data_then_zeros(p, data, want_data[k], (size_t)want_size[k]);
    }
    free(p);
}

/* A base env whose prealloc writes half the zeros, then fails (a disk that filled up). */
static io_ops half_ops;
static io_env half_env = {&half_ops};

static kura_status half_prealloc(io_file *f, uint64_t nbytes)
{
    assert_kura_ok(io_env_posix()->ops->prealloc(f, nbytes / 2));
    return kura_err(KURA_E_NOSPC, "preallocate: no space (test env)");
}

static kura_status half_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    return io_env_posix()->ops->open_write(env, path, kind, f_out); /* its file calls half_ops */
}

static void test_real_failure(void **state)
{
    fixture *fx = *state;
    half_ops = *io_env_posix()->ops;
    half_ops.open_write = half_open_write;
    half_ops.prealloc = half_prealloc;
    io_fault *fault = io_fault_new(&half_env);
    assert_non_null(fault);
    io_env *env = io_fault_env(fault);
    char *p = join(fx->dir, "h.log");
    char data[200];
    fill(data, sizeof data, 7);
    io_file *f = create(env, fx->dir, p);
    assert_kura_ok(io_append(f, data, 100));
    assert_kura_ok(io_sync(f));
    assert_kura_status(io_prealloc(f, 1000), KURA_E_NOSPC);
    assert_int_equal(disk_size(p), 600); /* half the zeros made it */
    assert_kura_ok(io_append(f, data + 100, 100)); /* overwrites zeros; poisoned: not durable */
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_close(f));
    io_fault_power_loss(fault, IO_LOSS_DROP, 1);
    assert_data_then_zeros(p, data, 100, 100); /* the stray zeros are gone too */
    /* with nothing unsynced the stray zeros still go */
    f = create(env, fx->dir, p);
    assert_kura_ok(io_append(f, data, 100));
    assert_kura_ok(io_sync(f));
    assert_kura_status(io_prealloc(f, 400), KURA_E_NOSPC);
    assert_kura_ok(io_close(f));
    assert_int_equal(disk_size(p), 300);
    io_fault_power_loss(fault, IO_LOSS_DROP, 2);
    assert_data_then_zeros(p, data, 100, 100);
    io_fault_free(fault);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_posix_keeps_position, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_keeps_zeros, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tear_between, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grow_past_zeros, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_fails_prealloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_at_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_failure, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
