/*
 * datadir.c - This file contains the data directory of --in-memory: a fresh directory under
 * $TMPDIR (or /tmp) made with mkdtemp(3) (mode 0700, a name nobody else can have taken),
 * holding an ordinary kura database, removed with everything in it when the server exits.
 * "In memory" means "gone at exit": the engine is the same, so tests exercise what
 * production runs.
 *
 * Removal goes through util/io (the file-system boundary): a name that unlink refuses is a
 * directory, listed and emptied first.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "util/io.h"
#include "util/status.h"

kura_status srv_tmpdir_create(char **path_out)
{
    const char *base = getenv("TMPDIR");
    char *path = NULL;
    if (!base || !*base) base = "/tmp";
    if (asprintf(&path, "%s/kura-server-XXXXXX", base) < 0)
        return kura_err(KURA_E_NOMEM, "out of memory");
    if (!mkdtemp(path)) {
        kura_status s = kura_err(kura_status_from_errno(errno),
                                 "cannot create a directory "
                                 "under %s: %s",
                                 base, strerror(errno));
        free(path);
        return s;
    }
    *path_out = path;
    return KURA_OK;
}

static kura_status remove_tree(io_env *env, const char *path, int depth)
{
    if (io_unlink(env, path) == KURA_OK) return KURA_OK;
    char **names;
    size_t n;
    kura_status s = io_list_dir(env, path, &names, &n);
    if (s != KURA_OK) return s;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        char child[PATH_MAX];
        if (snprintf(child, sizeof child, "%s/%s", path, names[i]) >= (int)sizeof child)
            s = kura_err(KURA_E_IO, "%s/%s: path too long", path, names[i]);
        else if (depth > 32)
            s = kura_err(KURA_E_IO, "%s: directories nested too deep", path);
        else
            s = remove_tree(env, child, depth + 1);
    }
    io_free_names(names, n);
    return s == KURA_OK ? io_rmdir(env, path) : s;
}

kura_status srv_tmpdir_remove(const char *path)
{
    return remove_tree(io_env_posix(), path, 0);
}
