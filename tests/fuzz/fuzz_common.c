/*
 * fuzz_common.c - the scratch input file and the status check of the fuzz targets.
 *
 * This file contains the helpers declared in fuzz_common.h. The scratch file lives in a
 * directory named after the process id, so parallel fuzzers (libFuzzer -jobs, several CTest
 * tests) never share a file; it is rewritten for every input and removed at exit.
 */
#include "tests/fuzz/fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/io.h"

static char fuzz_dir[512];
static char fuzz_path[600];

static void fuzz_cleanup(void)
{
    io_unlink(io_env_posix(), fuzz_path);
    io_rmdir(io_env_posix(), fuzz_dir);
}

static void fuzz_die(const char *what, kura_status s)
{
    fprintf(stderr, "fuzz harness: %s failed: %s (%s)\n", what, kura_status_str(s),
            kura_last_error());
    abort();
}

static void fuzz_init_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    kura_status s;

    if (!tmp || !*tmp)
        tmp = "/tmp";
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/kura-fuzz-%ld", tmp, (long)getpid());
    snprintf(fuzz_path, sizeof fuzz_path, "%s/input", fuzz_dir);
    s = io_mkdir(io_env_posix(), fuzz_dir);
    if (s != KURA_OK && s != KURA_E_EXISTS)
        fuzz_die(fuzz_dir, s);
    atexit(fuzz_cleanup);
}

const char *fuzz_write_input(const uint8_t *data, size_t size)
{
    io_file *f;
    kura_status s;

    if (!fuzz_dir[0])
        fuzz_init_dir();
    s = io_open_write(io_env_posix(), fuzz_path, IO_KIND_OTHER, &f);
    if (s != KURA_OK)
        fuzz_die("open scratch file", s);
    s = size ? io_append(f, data, size) : KURA_OK;
    if (s != KURA_OK)
        fuzz_die("write scratch file", s);
    s = io_close(f);
    if (s != KURA_OK)
        fuzz_die("close scratch file", s);
    return fuzz_path;
}

void fuzz_check_status(kura_status s, const kura_status *allowed, size_t nallowed,
                       const char *what)
{
    for (size_t i = 0; i < nallowed; i++)
        if (s == allowed[i])
            return;
    fprintf(stderr, "fuzz: %s returned unexpected status %d (%s): %s\n", what, (int)s,
            kura_status_str(s), kura_last_error());
    abort();
}
