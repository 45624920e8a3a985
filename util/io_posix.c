/*
 * io_posix.c - the real file system: the POSIX implementation of util/io.h.
 *
 * Appends use write(2) in a loop (EINTR and partial writes are continued; a write that makes
 * no progress is an error). sync is fdatasync(2), and its failure is reported, never retried.
 */
#include "util/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/status.h"

typedef struct posix_file {
    io_file base;
    int fd;
    uint64_t size; /* append position (write files) */
    char path[];
} posix_file;

static kura_status sys_err(const char *op, const char *path)
{
    int e = errno;
    return kura_err(kura_status_from_errno(e), "%s %s: %s", op, path, strerror(e));
}

static kura_status new_file(io_env *env, const char *path, io_kind kind, int fd, uint64_t size,
                            io_file **f_out)
{
    size_t n = strlen(path) + 1;
    posix_file *f = malloc(sizeof *f + n);
    if (!f) {
        close(fd);
        return kura_err(KURA_E_NOMEM, "open %s: out of memory", path);
    }
    f->base.env = env;
    f->base.kind = kind;
    f->fd = fd;
    f->size = size;
    memcpy(f->path, path, n);
    *f_out = &f->base;
    return KURA_OK;
}

static kura_status px_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return kura_err(KURA_E_NOT_FOUND, "open %s: no such file", path);
        return sys_err("open", path);
    }
    return new_file(env, path, kind, fd, 0, f_out);
}

static kura_status px_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return sys_err("create", path);
    return new_file(env, path, kind, fd, 0, f_out);
}

static kura_status px_close(io_file *file)
{
    posix_file *f = (posix_file *)file;
    kura_status s = KURA_OK;
    if (close(f->fd) != 0)
        s = sys_err("close", f->path);
    free(f);
    return s;
}

static kura_status px_read_at(io_file *file, uint64_t off, void *buf, size_t n, size_t *nread_out)
{
    posix_file *f = (posix_file *)file;
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(f->fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return sys_err("read", f->path);
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    *nread_out = done;
    return KURA_OK;
}

static kura_status px_append(io_file *file, const void *buf, size_t n)
{
    posix_file *f = (posix_file *)file;
    const char *p = buf;
    while (n) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return sys_err("write", f->path);
        }
        if (w == 0)
            return kura_err(KURA_E_IO, "write %s: no progress", f->path);
        p += w;
        n -= (size_t)w;
        f->size += (uint64_t)w;
    }
    return KURA_OK;
}

static kura_status px_sync(io_file *file)
{
    posix_file *f = (posix_file *)file;
    if (fdatasync(f->fd) != 0)
        return sys_err("fdatasync", f->path);
    return KURA_OK;
}

static kura_status px_file_size(io_file *file, uint64_t *size_out)
{
    posix_file *f = (posix_file *)file;
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return sys_err("fstat", f->path);
    *size_out = (uint64_t)st.st_size;
    return KURA_OK;
}

static kura_status px_path_size(io_env *env, const char *path, uint64_t *size_out)
{
    (void)env;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return kura_err(KURA_E_NOT_FOUND, "stat %s: no such file", path);
        return sys_err("stat", path);
    }
    *size_out = (uint64_t)st.st_size;
    return KURA_OK;
}

static kura_status px_rename(io_env *env, const char *from, const char *to)
{
    (void)env;
    if (rename(from, to) != 0) {
        int e = errno;
        return kura_err(kura_status_from_errno(e), "rename %s -> %s: %s", from, to, strerror(e));
    }
    return KURA_OK;
}

static kura_status px_unlink(io_env *env, const char *path)
{
    (void)env;
    if (unlink(path) != 0) {
        if (errno == ENOENT)
            return kura_err(KURA_E_NOT_FOUND, "unlink %s: no such file", path);
        return sys_err("unlink", path);
    }
    return KURA_OK;
}

static kura_status px_mkdir(io_env *env, const char *path)
{
    (void)env;
    if (mkdir(path, 0755) != 0) {
        if (errno != EEXIST)
            return sys_err("mkdir", path);
        /* "succeeds if it already exists" holds for a directory, not for a file */
        struct stat st;
        if (stat(path, &st) != 0)
            return sys_err("mkdir", path);
        if (!S_ISDIR(st.st_mode))
            return kura_err(KURA_E_IO, "mkdir %s: exists and is not a directory", path);
    }
    return KURA_OK;
}

static kura_status px_rmdir(io_env *env, const char *path)
{
    (void)env;
    if (rmdir(path) != 0) {
        if (errno == ENOENT)
            return kura_err(KURA_E_NOT_FOUND, "rmdir %s: no such directory", path);
        return sys_err("rmdir", path);
    }
    return KURA_OK;
}

static kura_status px_sync_dir(io_env *env, const char *path)
{
    (void)env;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return sys_err("open directory", path);
    kura_status s = KURA_OK;
    if (fsync(fd) != 0)
        s = sys_err("fsync directory", path);
    close(fd);
    return s;
}

static kura_status px_list_dir(io_env *env, const char *path, char ***names_out, size_t *n_out)
{
    (void)env;
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT)
            return kura_err(KURA_E_NOT_FOUND, "opendir %s: no such directory", path);
        return sys_err("opendir", path);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    kura_status s = KURA_OK;
    struct dirent *de;
    for (;;) {
        errno = 0;
        if (!(de = readdir(d))) {
            if (errno)
                s = sys_err("readdir", path);
            break;
        }
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn) {
                s = kura_err(KURA_E_NOMEM, "list %s: out of memory", path);
                break;
            }
            names = nn;
            cap = ncap;
        }
        if (!(names[n] = strdup(de->d_name))) {
            s = kura_err(KURA_E_NOMEM, "list %s: out of memory", path);
            break;
        }
        n++;
    }
    closedir(d);
    if (s != KURA_OK) {
        io_free_names(names, n);
        return s;
    }
    *names_out = names;
    *n_out = n;
    return KURA_OK;
}

static kura_status px_lock(io_env *env, const char *path, io_file **f_out)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return sys_err("open lock", path);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return kura_err(KURA_E_BUSY, "lock %s: held by another process", path);
        errno = e;
        return sys_err("lock", path);
    }
    return new_file(env, path, IO_KIND_LOCK, fd, 0, f_out);
}

static kura_status px_prealloc(io_file *file, uint64_t nbytes)
{
    posix_file *f = (posix_file *)file;
    static const char zeros[64 * 1024];
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return sys_err("fstat", f->path);
    /* pwrite leaves the file offset, and so the append position, untouched */
    uint64_t off = (uint64_t)st.st_size > f->size ? (uint64_t)st.st_size : f->size;
    while (nbytes) {
        size_t n = nbytes < sizeof zeros ? (size_t)nbytes : sizeof zeros;
        ssize_t w = pwrite(f->fd, zeros, n, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return sys_err("preallocate", f->path);
        }
        if (w == 0)
            return kura_err(KURA_E_IO, "preallocate %s: no progress", f->path);
        off += (uint64_t)w;
        nbytes -= (uint64_t)w;
    }
    if (fdatasync(f->fd) != 0)
        return sys_err("fdatasync", f->path);
    return KURA_OK;
}

static kura_status px_crash_point(io_env *env, const char *name)
{
    (void)env, (void)name;
    return KURA_OK;
}

static const io_ops posix_ops = {
    .open_read = px_open_read,
    .open_write = px_open_write,
    .close = px_close,
    .read_at = px_read_at,
    .append = px_append,
    .sync = px_sync,
    .file_size = px_file_size,
    .path_size = px_path_size,
    .rename = px_rename,
    .unlink = px_unlink,
    .mkdir = px_mkdir,
    .rmdir = px_rmdir,
    .sync_dir = px_sync_dir,
    .list_dir = px_list_dir,
    .lock = px_lock,
    .prealloc = px_prealloc,
    .crash_point = px_crash_point,
};

static io_env posix_env = {&posix_ops};

io_env *io_env_posix(void)
{
    return &posix_env;
}
