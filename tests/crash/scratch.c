/*
 * scratch.c - scale factor, directory copies and raw file access for the crash and fault
 * tests (see scratch.h). Plain POSIX on purpose: this is the disk, not the engine.
 */
#include "crash/scratch.h"

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

double scratch_scale(void)
{
    const char *env = getenv("KURA_TEST_SCALE");
    double s = env && *env ? strtod(env, NULL) : 1.0;
    return s > 0 ? s : 1.0;
}

uint64_t scratch_scaled(uint64_t n)
{
    double v = (double)n * scratch_scale() + 0.5;
    return v < 1 ? 1 : (uint64_t)v;
}

char *scratch_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        fail_msg("out of memory");
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

uint8_t *scratch_read(const char *path, size_t *n_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size)
        fail_msg("read %s failed", path);
    fclose(f);
    *n_out = (size_t)size;
    return buf;
}

void scratch_write(const char *path, const void *p, size_t n)
{
    unlink(path); /* a truncate-in-place would make ext4 flush the file on close */
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("create %s: %s", path, strerror(errno));
    if (n && fwrite(p, 1, n, f) != n)
        fail_msg("write %s failed", path);
    if (fclose(f) != 0)
        fail_msg("close %s failed", path);
}

int64_t scratch_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (int64_t)st.st_size;
}

void scratch_copy_dir(const char *from, const char *to)
{
    if (mkdir(to, 0755) != 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", to, strerror(errno));
    DIR *d = opendir(from);
    if (!d)
        fail_msg("opendir %s: %s", from, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *src = scratch_join(from, e->d_name), *dst = scratch_join(to, e->d_name);
        struct stat st;
        if (lstat(src, &st) != 0)
            fail_msg("stat %s: %s", src, strerror(errno));
        if (S_ISDIR(st.st_mode)) {
            scratch_copy_dir(src, dst);
        } else {
            size_t n;
            uint8_t *data = scratch_read(src, &n);
            scratch_write(dst, data, n);
            free(data);
        }
        free(src);
        free(dst);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t scratch_find(const char *dir, const char *pattern, char **paths_out, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("opendir %s: %s", dir, strerror(errno));
    size_t plen = strlen(pattern), n = 0;
    bool prefix = plen && pattern[plen - 1] == '-';
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        bool match = prefix ? !strncmp(e->d_name, pattern, plen)
                            : len >= plen && !strcmp(e->d_name + len - plen, pattern);
        if (!match || e->d_name[0] == '.')
            continue;
        if (n < cap)
            paths_out[n] = scratch_join(dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(paths_out, n < cap ? n : cap, sizeof *paths_out, cmp_str);
    return n;
}

void scratch_free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
}
