/*
 * io_fault_fixture.h - the fixture shared by the io_fault test programs: a scratch directory
 * with a fault env over POSIX, and helpers that look at the real disk underneath it.
 *
 * Define IO_FAULT_FIXTURE_TAG (the scratch directory's name prefix) before including.
 * Everything is static: each test program gets its own copy, unused ones are fine.
 */
#ifndef KURA_IO_FAULT_FIXTURE_H
#define KURA_IO_FAULT_FIXTURE_H

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/io_fault.h"

#define FIXTURE_UNUSED __attribute__((unused))

typedef struct fixture {
    char *dir;
    io_fault *fault;
    io_env *env;
} fixture;

static FIXTURE_UNUSED int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->dir = test_mkdtemp(IO_FAULT_FIXTURE_TAG);
    fx->fault = io_fault_new(io_env_posix());
    assert_non_null(fx->fault);
    fx->env = io_fault_env(fx->fault);
    *state = fx;
    return 0;
}

static FIXTURE_UNUSED int teardown(void **state)
{
    fixture *fx = *state;
    io_fault_free(fx->fault);
    test_rmrf(fx->dir);
    free(fx);
    return 0;
}

/* dir/name, malloc'ed. */
static FIXTURE_UNUSED char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Size on the real disk, -1 if missing. */
static FIXTURE_UNUSED int64_t disk_size(const char *path)
{
    uint64_t size;
    kura_status s = io_path_size(io_env_posix(), path, &size);
    if (s == KURA_E_NOT_FOUND)
        return -1;
    assert_kura_ok(s);
    return (int64_t)size;
}

/* The real content of path (malloc'ed, *n_out bytes). */
static FIXTURE_UNUSED char *disk_read(const char *path, size_t *n_out)
{
    void *data;
    assert_kura_ok(io_read_file(io_env_posix(), path, IO_KIND_OTHER, 1 << 20, &data, n_out));
    return data;
}

static FIXTURE_UNUSED void assert_content(const char *path, const char *want)
{
    size_t n;
    char *got = disk_read(path, &n);
    if (n != strlen(want) || memcmp(got, want, n))
        fail_msg("%s holds \"%.*s\", want \"%s\"", path, (int)n, got, want);
    free(got);
}

static FIXTURE_UNUSED void assert_msg_has(const char *needle)
{
    if (!strstr(kura_last_error(), needle))
        fail_msg("message \"%s\" lacks \"%s\"", kura_last_error(), needle);
}

#endif
