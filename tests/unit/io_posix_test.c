/*
 * io_posix_test.c - the POSIX env (util/io_posix.c) and the helpers of util/io_util.c on a
 * scratch directory: every operation of util/io.h, its error statuses, and the messages.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/io.h"

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void write_file(io_env *e, const char *path, const char *data, bool sync)
{
    io_file *f;
    assert_kura_ok(io_open_write(e, path, IO_KIND_OTHER, &f));
    assert_kura_ok(io_append(f, data, strlen(data)));
    if (sync)
        assert_kura_ok(io_sync(f));
    assert_kura_ok(io_close(f));
}

static bool has_name(char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

static void test_write_read(void **state)
{
    (void)state;
    io_env *e = io_env_posix();
    assert_ptr_equal(io_env_or_default(NULL), e);
    char *dir = test_mkdtemp("io_posix");
    char *path = join(dir, "000001.log");

    io_file *f;
    assert_kura_ok(io_open_write(e, path, IO_KIND_WAL, &f));
    assert_int_equal(f->kind, IO_KIND_WAL);
    assert_ptr_equal(f->env, e);
    assert_kura_ok(io_append(f, "hello ", 6));
    assert_kura_ok(io_append(f, "world", 5));
    assert_kura_ok(io_append(f, "", 0));
    uint64_t size = 0;
    assert_kura_ok(io_file_size(f, &size));
    assert_int_equal(size, 11);
    assert_kura_ok(io_sync(f));
    assert_kura_ok(io_close(f));
    assert_kura_ok(io_close(NULL));

    assert_kura_ok(io_path_size(e, path, &size));
    assert_int_equal(size, 11);
    assert_kura_ok(io_open_read(e, path, IO_KIND_WAL, &f));
    char buf[32];
    size_t got = 0;
    assert_kura_ok(io_read_at(f, 6, buf, 5, &got));
    assert_int_equal(got, 5);
    assert_memory_equal(buf, "world", 5);
    /* a read across the end is short, a read past it is empty */
    assert_kura_ok(io_read_at(f, 8, buf, sizeof buf, &got));
    assert_int_equal(got, 3);
    assert_memory_equal(buf, "rld", 3);
    assert_kura_ok(io_read_at(f, 100, buf, sizeof buf, &got));
    assert_int_equal(got, 0);
    assert_kura_ok(io_close(f));

    /* open_write truncates an existing file */
    write_file(e, path, "x", true);
    assert_kura_ok(io_path_size(e, path, &size));
    assert_int_equal(size, 1);
    free(path);
    test_rmrf(dir);
}

static void test_not_found(void **state)
{
    (void)state;
    io_env *e = io_env_posix();
    char *dir = test_mkdtemp("io_posix");
    char *path = join(dir, "missing");
    io_file *f = (io_file *)0x1;
    uint64_t size = 77;
    char **names = NULL;
    size_t n = 99;

    assert_kura_status(io_open_read(e, path, IO_KIND_SST, &f), KURA_E_NOT_FOUND);
    assert_ptr_equal(f, (io_file *)0x1); /* out-params untouched on failure */
    assert_non_null(strstr(kura_last_error(), path));
    assert_kura_status(io_path_size(e, path, &size), KURA_E_NOT_FOUND);
    assert_int_equal(size, 77);
    assert_kura_status(io_unlink(e, path), KURA_E_NOT_FOUND);
    assert_kura_status(io_rmdir(e, path), KURA_E_NOT_FOUND);
    assert_kura_status(io_list_dir(e, path, &names, &n), KURA_E_NOT_FOUND);
    assert_null(names);
    assert_int_equal(n, 99);
    /* rename of a missing file names both paths */
    char *to = join(dir, "to");
    assert_kura_status(io_rename(e, path, to), KURA_E_IO);
    assert_non_null(strstr(kura_last_error(), path));
    assert_non_null(strstr(kura_last_error(), to));
    /* creating in a missing directory fails */
    char *deep = join(path, "file");
    assert_kura_status(io_open_write(e, deep, IO_KIND_OTHER, &f), KURA_E_IO);
    assert_kura_status(io_sync_dir(e, path), KURA_E_IO);
    free(deep);
    free(to);
    free(path);
    test_rmrf(dir);
}

static void test_namespace(void **state)
{
    (void)state;
    io_env *e = io_env_posix();
    char *dir = test_mkdtemp("io_posix");
    char *sub = join(dir, "sub"), *a = join(dir, "a"), *b = join(dir, "b");

    assert_kura_ok(io_mkdir(e, sub));
    assert_kura_ok(io_mkdir(e, sub)); /* exists: fine */
    write_file(e, a, "AAA", false);
    write_file(e, b, "BB", false);
    /* mkdir over a file is an error (regression: it used to succeed) */
    assert_kura_status(io_mkdir(e, a), KURA_E_IO);

    char **names;
    size_t n;
    assert_kura_ok(io_list_dir(e, dir, &names, &n));
    assert_int_equal(n, 3);
    assert_true(has_name(names, n, "sub") && has_name(names, n, "a") && has_name(names, n, "b"));
    assert_false(has_name(names, n, ".") || has_name(names, n, ".."));
    io_free_names(names, n);
    io_free_names(NULL, 0);
    assert_kura_ok(io_list_dir(e, sub, &names, &n));
    assert_int_equal(n, 0);
    io_free_names(names, n);

    /* rename replaces the target */
    assert_kura_ok(io_rename(e, a, b));
    uint64_t size;
    assert_kura_ok(io_path_size(e, b, &size));
    assert_int_equal(size, 3);
    assert_kura_status(io_path_size(e, a, &size), KURA_E_NOT_FOUND);
    assert_kura_ok(io_sync_dir(e, dir));

    /* rmdir refuses a non-empty directory */
    char *inner = join(sub, "f");
    write_file(e, inner, "i", false);
    assert_kura_status(io_rmdir(e, sub), KURA_E_IO);
    assert_kura_ok(io_unlink(e, inner));
    assert_kura_ok(io_rmdir(e, sub));
    assert_kura_status(io_path_size(e, sub, &size), KURA_E_NOT_FOUND);
    assert_kura_ok(io_crash_point(e, "wal.after_sync"));
    free(inner);
    free(sub);
    free(a);
    free(b);
    test_rmrf(dir);
}

static void test_lock(void **state)
{
    (void)state;
    io_env *e = io_env_posix();
    char *dir = test_mkdtemp("io_posix");
    char *path = join(dir, "LOCK");
    io_file *l1, *l2 = NULL;
    assert_kura_ok(io_lock(e, path, &l1));
    assert_int_equal(l1->kind, IO_KIND_LOCK);
    /* flock is per open file description: a second lock in this process fails too */
    assert_kura_status(io_lock(e, path, &l2), KURA_E_BUSY);
    assert_null(l2);
    assert_non_null(strstr(kura_last_error(), path));
    assert_kura_ok(io_close(l1));
    assert_kura_ok(io_lock(e, path, &l2));
    assert_kura_ok(io_close(l2));
    free(path);
    test_rmrf(dir);
}

static void test_read_exact(void **state)
{
    (void)state;
    io_env *e = io_env_posix();
    char *dir = test_mkdtemp("io_posix");
    char *path = join(dir, "data");
    write_file(e, path, "0123456789", false);
    io_file *f;
    assert_kura_ok(io_open_read(e, path, IO_KIND_SST, &f));
    char buf[16];
    assert_kura_ok(io_read_exact(f, path, 2, buf, 4));
    assert_memory_equal(buf, "2345", 4);
    assert_kura_status(io_read_exact(f, path, 8, buf, 4), KURA_E_CORRUPTION);
    char want[512];
    snprintf(want, sizeof want, "%s: truncated: wanted 4 bytes at offset 8, got 2", path);
    assert_string_equal(kura_last_error(), want);
    assert_kura_ok(io_close(f));
    free(path);
    test_rmrf(dir);
}

static void test_write_file_atomic(void **state)
{
    (void)state;
    io_env *e = io_env_posix();
    char *dir = test_mkdtemp("io_posix");
    char *path = join(dir, "CURRENT");
    assert_kura_ok(io_write_file_atomic(e, dir, "CURRENT", IO_KIND_CURRENT, "MANIFEST-1\n", 11));
    assert_kura_ok(io_write_file_atomic(e, dir, "CURRENT", IO_KIND_CURRENT, "MANIFEST-22\n", 12));
    void *data;
    size_t n;
    assert_kura_ok(io_read_file(e, path, IO_KIND_CURRENT, 100, &data, &n));
    assert_int_equal(n, 12);
    assert_string_equal(data, "MANIFEST-22\n"); /* NUL-terminated for convenience */
    free(data);
    char **names;
    size_t nn;
    assert_kura_ok(io_list_dir(e, dir, &names, &nn));
    assert_int_equal(nn, 1); /* no CURRENT.tmp left */
    assert_string_equal(names[0], "CURRENT");
    io_free_names(names, nn);
    free(path);
    test_rmrf(dir);
}

static void test_read_file(void **state)
{
    (void)state;
    io_env *e = io_env_posix();
    char *dir = test_mkdtemp("io_posix");
    char *path = join(dir, "f"), *empty = join(dir, "empty"), *missing = join(dir, "missing");
    write_file(e, path, "abcdef", false);
    write_file(e, empty, "", false);
    void *data = (void *)0x1;
    size_t n = 5;
    assert_kura_status(io_read_file(e, path, IO_KIND_OTHER, 5, &data, &n), KURA_E_CORRUPTION);
    assert_non_null(strstr(kura_last_error(), path));
    assert_ptr_equal(data, (void *)0x1);
    assert_kura_ok(io_read_file(e, path, IO_KIND_OTHER, 6, &data, &n));
    assert_int_equal(n, 6);
    assert_memory_equal(data, "abcdef", 7);
    free(data);
    assert_kura_ok(io_read_file(e, empty, IO_KIND_OTHER, 6, &data, &n));
    assert_int_equal(n, 0);
    assert_string_equal(data, "");
    free(data);
    assert_kura_status(io_read_file(e, missing, IO_KIND_OTHER, 6, &data, &n), KURA_E_NOT_FOUND);
    free(path);
    free(empty);
    free(missing);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_read),       cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_namespace),        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_read_exact),       cmocka_unit_test(test_write_file_atomic),
        cmocka_unit_test(test_read_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
