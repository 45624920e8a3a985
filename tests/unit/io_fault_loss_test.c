/*
 * io_fault_loss_test.c - io_fault_power_loss (util/io_fault_loss.c): DROP keeps exactly the
 * synced bytes, TEAR cuts between synced and written lengths and depends only on the seed, and
 * creates, renames, unlinks, mkdirs and rmdirs not made durable by sync_dir are undone, while
 * the synced ones stick. Everything is checked on the real disk through the POSIX env.
 */
#define IO_FAULT_FIXTURE_TAG "io_fault_loss"
#include "io_fault_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/io_fault.h"

/* Names on the real disk starting with ".iofault." */
static size_t hidden_count(const char *dir)
{
    char **names;
    size_t n, hidden = 0;
    assert_kura_ok(io_list_dir(io_env_posix(), dir, &names, &n));
    for (size_t i = 0; i < n; i++)
        hidden += !strncmp(names[i], ".iofault.", 9);
    io_free_names(names, n);
    return hidden;
}

/* Writes data to a new file through env; syncs the data and/or the directory on request. */
static void put(io_env *env, const char *dir, const char *path, const char *data, bool sync,
                bool sync_dir)
{
    io_file *f;
    assert_kura_ok(io_open_write(env, path, IO_KIND_OTHER, &f));
    assert_kura_ok(io_append(f, data, strlen(data)));
    if (sync)
        assert_kura_ok(io_sync(f));
    assert_kura_ok(io_close(f));
    if (sync_dir)
        assert_kura_ok(io_sync_dir(env, dir));
}

static void test_drop_keeps_synced(void **state)
{
    fixture *fx = *state;
    char *a = join(fx->dir, "a.log"), *b = join(fx->dir, "b.log");
    char *c = join(fx->dir, "c.old"), *d = join(fx->dir, "d.new");
    put(io_env_posix(), fx->dir, c, "untouched", false, false);
    io_file *fa, *fb;
    assert_kura_ok(io_open_write(fx->env, a, IO_KIND_WAL, &fa));
    assert_kura_ok(io_open_write(fx->env, b, IO_KIND_WAL, &fb));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_kura_ok(io_append(fa, "synced|", 7));
    assert_kura_ok(io_append(fa, "also synced|", 12));
    assert_kura_ok(io_sync(fa));
    assert_kura_ok(io_append(fa, "lost", 4));
    assert_kura_ok(io_append(fb, "never synced", 12));
    put(fx->env, fx->dir, d, "synced data, unsynced create", true, false);
    assert_int_equal(disk_size(a), 23);

    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1); /* fa, fb still open */
    assert_content(a, "synced|also synced|");
    assert_int_equal(disk_size(b), 0);
    assert_content(c, "untouched");
    assert_int_equal(disk_size(d), -1);
    assert_int_equal(hidden_count(fx->dir), 0);
    assert_kura_ok(io_close(fa));
    assert_kura_ok(io_close(fb));

    /* the env forgot everything: what is on disk now is durable */
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 2);
    assert_content(a, "synced|also synced|");
    free(a);
    free(b);
    free(c);
    free(d);
}

#define TEAR_SYNCED 1000
#define TEAR_TOTAL 4000

/* Writes TEAR_SYNCED synced and the rest unsynced bytes of orig to path, then cuts power. */
static char *tear_once(fixture *fx, const char *path, const char *orig, uint64_t seed,
                       size_t *n_out)
{
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, path, IO_KIND_SST, &f));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_kura_ok(io_append(f, orig, TEAR_SYNCED));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_append(f, orig + TEAR_SYNCED, TEAR_TOTAL - TEAR_SYNCED));
    assert_kura_ok(io_close(f));
    io_fault_power_loss(fx->fault, IO_LOSS_TEAR, seed);
    return disk_read(path, n_out);
}

static void test_tear(void **state)
{
    fixture *fx = *state;
    char *path = join(fx->dir, "t.sst");
    char orig[TEAR_TOTAL];
    uint64_t rng = 42;
    for (size_t i = 0; i < sizeof orig; i++)
        orig[i] = (char)(1 + test_rand(&rng) % 255); /* never 0, so zero-fill shows */
    size_t sizes[64], distinct = 0;
    int garbage_seen = 0, clean_tail_seen = 0;
    for (uint64_t seed = 0; seed < 64; seed++) {
        size_t n;
        char *got = tear_once(fx, path, orig, seed, &n);
        if (n < TEAR_SYNCED || n > TEAR_TOTAL)
            fail_msg("seed %llu: %zu bytes survived, outside [%d, %d]",
                     (unsigned long long)seed, n, TEAR_SYNCED, TEAR_TOTAL);
        /* below the cut's sector (and always below the synced length) nothing changed */
        size_t intact = n / 512 * 512 > TEAR_SYNCED ? n / 512 * 512 : TEAR_SYNCED;
        if (intact > n)
            intact = n;
        for (size_t i = 0; i < intact; i++)
            if (got[i] != orig[i])
                fail_msg("seed %llu: byte %zu changed (cut at %zu)", (unsigned long long)seed, i,
                         n);
        if (memcmp(got + intact, orig + intact, n - intact))
            garbage_seen++;
        else if (n > intact)
            clean_tail_seen++;
        bool dup = false;
        for (size_t j = 0; j < distinct; j++)
            dup = dup || sizes[j] == n;
        if (!dup)
            sizes[distinct++] = n;
        free(got);
    }
    /* different seeds, different outcomes; both halves of the garbage coin show up */
    assert_true(distinct >= 32);
    assert_true(garbage_seen > 0);
    assert_true(clean_tail_seen > 0);
    /* one seed, one outcome */
    size_t n1, n2;
    char *r1 = tear_once(fx, path, orig, 12345, &n1);
    char *r2 = tear_once(fx, path, orig, 12345, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(r1, r2, n1);
    free(r1);
    free(r2);
    free(path);
}

static void test_undo_create(void **state)
{
    fixture *fx = *state;
    char *gone = join(fx->dir, "gone"), *kept = join(fx->dir, "kept");
    put(fx->env, fx->dir, kept, "durable", true, true);
    put(fx->env, fx->dir, gone, "synced but not linked", true, false);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_int_equal(disk_size(gone), -1);
    assert_content(kept, "durable");

    /* a failed sync_dir makes nothing durable */
    put(fx->env, fx->dir, gone, "x", true, false);
    io_fault_rule r = {.at = 1, .op_mask = 1u << IO_OP_SYNC_DIR, .error = EIO};
    io_fault_set_rule(fx->fault, &r);
    assert_kura_status(io_sync_dir(fx->env, fx->dir), KURA_E_IO);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_int_equal(disk_size(gone), -1);

    /* paths are normalised: "dir//./name" and "dir/" are the same file and directory */
    char *odd = malloc(strlen(fx->dir) + 16), *odd_dir = join(fx->dir, "");
    sprintf(odd, "%s//./gone", fx->dir);
    put(fx->env, odd_dir, odd, "normalised", true, true);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(gone, "normalised");
    free(odd);
    free(odd_dir);
    free(gone);
    free(kept);
}

static void test_undo_rename(void **state)
{
    fixture *fx = *state;
    char *cur = join(fx->dir, "CURRENT"), *tmp = join(fx->dir, "CURRENT.tmp");
    assert_kura_ok(io_write_file_atomic(fx->env, fx->dir, "CURRENT", IO_KIND_CURRENT, "v1", 2));

    /* rename over CURRENT, not synced: the old CURRENT comes back, the new file's create too */
    put(fx->env, fx->dir, tmp, "v2-longer", true, false);
    assert_kura_ok(io_rename(fx->env, tmp, cur));
    assert_content(cur, "v2-longer");
    assert_int_equal(hidden_count(fx->dir), 1); /* the replaced file waits, hidden */
    char **names;
    size_t n;
    assert_kura_ok(io_list_dir(fx->env, fx->dir, &names, &n));
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "CURRENT");
    io_free_names(names, n);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(cur, "v1");
    assert_int_equal(disk_size(tmp), -1);
    assert_int_equal(hidden_count(fx->dir), 0);

    /* a durable create, then an unsynced rename: both names come back */
    put(fx->env, fx->dir, tmp, "v3", true, true);
    assert_kura_ok(io_rename(fx->env, tmp, cur));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(cur, "v1");
    assert_content(tmp, "v3");

    /* sync_dir makes the rename stick and drops the hidden copy */
    assert_kura_ok(io_rename(fx->env, tmp, cur));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_int_equal(hidden_count(fx->dir), 0);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(cur, "v3");
    assert_int_equal(disk_size(tmp), -1);
    free(cur);
    free(tmp);
}

static void test_undo_unlink(void **state)
{
    fixture *fx = *state;
    char *x = join(fx->dir, "x.sst");
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, x, IO_KIND_SST, &f));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_kura_ok(io_append(f, "kept|", 5));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_append(f, "unsynced", 8));
    assert_kura_ok(io_close(f));
    assert_kura_ok(io_unlink(fx->env, x));
    uint64_t size;
    assert_kura_status(io_path_size(fx->env, x, &size), KURA_E_NOT_FOUND);
    assert_kura_status(io_unlink(fx->env, x), KURA_E_NOT_FOUND);
    assert_int_equal(hidden_count(fx->dir), 1);
    char **names;
    size_t n;
    assert_kura_ok(io_list_dir(fx->env, fx->dir, &names, &n));
    assert_int_equal(n, 0);
    io_free_names(names, n);
    /* it comes back with its synced content only */
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(x, "kept|");
    assert_int_equal(hidden_count(fx->dir), 0);

    /* a synced unlink sticks */
    assert_kura_ok(io_unlink(fx->env, x));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_int_equal(hidden_count(fx->dir), 0);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_int_equal(disk_size(x), -1);

    /* a file unlinked while open keeps its node: what its handle syncs afterwards counts */
    assert_kura_ok(io_open_write(fx->env, x, IO_KIND_WAL, &f));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    assert_kura_ok(io_append(f, "a|", 2));
    assert_kura_ok(io_unlink(fx->env, x));
    assert_kura_ok(io_append(f, "b|", 2));
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_append(f, "c|", 2));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(x, "a|b|");
    assert_kura_ok(io_close(f));

    /* io_fault_free makes pending unlinks permanent (a normal process end) */
    put(fx->env, fx->dir, x, "y", true, true);
    assert_kura_ok(io_unlink(fx->env, x));
    io_fault_free(fx->fault);
    fx->fault = io_fault_new(io_env_posix());
    assert_int_equal(hidden_count(fx->dir), 0);
    assert_int_equal(disk_size(x), -1);
    free(x);
}

static void test_truncate_existing(void **state)
{
    fixture *fx = *state;
    char *p = join(fx->dir, "MANIFEST");
    put(io_env_posix(), fx->dir, p, "old durable content", true, false);
    io_file *f;
    assert_kura_ok(io_open_write(fx->env, p, IO_KIND_MANIFEST, &f));
    assert_kura_ok(io_append(f, "new", 3));
    assert_kura_ok(io_close(f));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_int_equal(disk_size(p), 0); /* synced length of a truncated file is 0 */
    put(fx->env, fx->dir, p, "new", true, false);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(p, "new");
    free(p);
}

static void test_directories(void **state)
{
    fixture *fx = *state;
    char *d = join(fx->dir, "d"), *df = join(fx->dir, "d/f"), *e = join(fx->dir, "e");
    char *ef = join(fx->dir, "e/f");
    /* mkdir without syncing the parent: the directory and its synced content vanish */
    assert_kura_ok(io_mkdir(fx->env, d));
    put(fx->env, d, df, "inside", true, true);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_int_equal(disk_size(d), -1);
    assert_kura_ok(io_mkdir(fx->env, d));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    put(fx->env, d, df, "inside", true, true);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(df, "inside");

    /* renaming a directory is undone as a whole */
    assert_kura_ok(io_rename(fx->env, d, e));
    assert_int_equal(disk_size(df), -1);
    assert_content(ef, "inside");
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(df, "inside");
    assert_int_equal(disk_size(e), -1);
    assert_kura_ok(io_rename(fx->env, d, e));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_content(ef, "inside");

    /* rmdir after a pending unlink: the unlink settles, the rmdir is undone */
    assert_kura_ok(io_unlink(fx->env, ef));
    assert_kura_ok(io_rmdir(fx->env, e));
    assert_int_equal(disk_size(e), -1);
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_true(disk_size(e) >= 0);
    assert_int_equal(disk_size(ef), -1);
    char **names;
    size_t n;
    assert_kura_ok(io_list_dir(io_env_posix(), e, &names, &n));
    assert_int_equal(n, 0);
    io_free_names(names, n);
    assert_kura_ok(io_rmdir(fx->env, e));
    assert_kura_ok(io_sync_dir(fx->env, fx->dir));
    io_fault_power_loss(fx->fault, IO_LOSS_DROP, 1);
    assert_int_equal(disk_size(e), -1);
    free(d);
    free(df);
    free(e);
    free(ef);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_drop_keeps_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tear, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undo_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undo_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undo_unlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncate_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directories, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
