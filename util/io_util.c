/*
 * io_util.c - helpers composed from the io table: exact reads, atomic small-file replacement,
 * whole-file reads. They work with any env, so faults injected below show up here too.
 */
#include "util/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

void io_free_names(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

kura_status io_read_exact(io_file *f, const char *path, uint64_t off, void *buf, size_t n)
{
    size_t got = 0;
    kura_status s = io_read_at(f, off, buf, n, &got);
    if (s != KURA_OK)
        return s;
    if (got != n)
        return kura_err(KURA_E_CORRUPTION, "%s: truncated: wanted %zu bytes at offset %llu, got %zu",
                        path, n, (unsigned long long)off, got);
    return KURA_OK;
}

kura_status io_write_file_atomic(io_env *e, const char *dir, const char *name, io_kind kind,
                                 const void *data, size_t n)
{
    size_t plen = strlen(dir) + strlen(name) + 8;
    char *path = malloc(plen), *tmp = malloc(plen);
    kura_status s = KURA_OK;
    io_file *f = NULL;
    if (!path || !tmp) {
        s = kura_err(KURA_E_NOMEM, "write %s/%s: out of memory", dir, name);
        goto out;
    }
    snprintf(path, plen, "%s/%s", dir, name);
    snprintf(tmp, plen, "%s/%s.tmp", dir, name);
    if ((s = io_open_write(e, tmp, kind, &f)) != KURA_OK)
        goto out;
    if ((s = io_append(f, data, n)) != KURA_OK || (s = io_sync(f)) != KURA_OK) {
        /* the cleanup may fail too (e.g. a crashed env): report the first failure */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", kura_last_error());
        io_close(f);
        io_unlink(e, tmp);
        kura_err(s, "%s", msg);
        goto out;
    }
    if ((s = io_close(f)) != KURA_OK)
        goto out;
    if ((s = io_rename(e, tmp, path)) != KURA_OK)
        goto out;
    s = io_sync_dir(e, dir);
out:
    free(path);
    free(tmp);
    return s;
}

kura_status io_read_file(io_env *e, const char *path, io_kind kind, size_t max_bytes,
                         void **data_out, size_t *n_out)
{
    io_file *f = NULL;
    kura_status s = io_open_read(e, path, kind, &f);
    if (s != KURA_OK)
        return s;
    uint64_t size = 0;
    char *buf = NULL;
    if ((s = io_file_size(f, &size)) != KURA_OK)
        goto out;
    if (size > max_bytes) {
        s = kura_err(KURA_E_CORRUPTION, "%s: %llu bytes, more than the %zu expected", path,
                     (unsigned long long)size, max_bytes);
        goto out;
    }
    if (!(buf = malloc(size + 1))) {
        s = kura_err(KURA_E_NOMEM, "read %s: out of memory", path);
        goto out;
    }
    size_t got = 0;
    if ((s = io_read_at(f, 0, buf, size, &got)) != KURA_OK)
        goto out;
    buf[got] = 0; /* convenient for text files */
    *data_out = buf;
    *n_out = got;
    buf = NULL;
out:
    free(buf);
    io_close(f);
    return s;
}
