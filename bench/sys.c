/*
 * sys.c - directory trees, the process's peak RSS and the machine description for
 * kura-bench (see sys.h for why this uses POSIX directly).
 */
#include "bench/sys.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "util/status.h"

/* Calls fn(child path) for every entry of directory `dir`; stops at the first error. */
static kura_status for_each_child(const char *dir, kura_status (*fn)(const char *, void *),
                                  void *arg)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return kura_err(kura_status_from_errno(errno), "opendir %s: %s", dir, strerror(errno));
    kura_status s = KURA_OK;
    struct dirent *e;
    while (s == KURA_OK && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) {
            s = kura_err(KURA_E_INVALID, "path too long under %s", dir);
            break;
        }
        s = fn(path, arg);
    }
    closedir(d);
    return s;
}

static kura_status rmrf_one(const char *path, void *arg)
{
    (void)arg;
    return bench_fs_rmrf(path);
}

kura_status bench_fs_rmrf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return KURA_OK;
        return kura_err(kura_status_from_errno(errno), "stat %s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        kura_status s = for_each_child(path, rmrf_one, NULL);
        if (s != KURA_OK)
            return s;
        if (rmdir(path) != 0)
            return kura_err(kura_status_from_errno(errno), "rmdir %s: %s", path,
                            strerror(errno));
        return KURA_OK;
    }
    if (unlink(path) != 0 && errno != ENOENT)
        return kura_err(kura_status_from_errno(errno), "unlink %s: %s", path, strerror(errno));
    return KURA_OK;
}

kura_status bench_fs_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    if ((size_t)snprintf(buf, sizeof buf, "%s", path) >= sizeof buf)
        return kura_err(KURA_E_INVALID, "path too long: %s", path);
    for (char *p = buf + 1;; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end)
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return kura_err(kura_status_from_errno(errno), "mkdir %s: %s", buf,
                            strerror(errno));
        if (end)
            return KURA_OK;
        *p = '/';
    }
}

static kura_status du_one(const char *path, void *arg)
{
    uint64_t sub = 0;
    kura_status s = bench_fs_du(path, &sub);
    if (s == KURA_OK)
        *(uint64_t *)arg += sub;
    return s;
}

kura_status bench_fs_du(const char *path, uint64_t *bytes_out)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) { /* e.g. a temporary file deleted while we walked */
            *bytes_out = 0;
            return KURA_OK;
        }
        return kura_err(kura_status_from_errno(errno), "stat %s: %s", path, strerror(errno));
    }
    if (S_ISREG(st.st_mode)) {
        *bytes_out = (uint64_t)st.st_size;
        return KURA_OK;
    }
    uint64_t total = 0;
    if (S_ISDIR(st.st_mode)) {
        kura_status s = for_each_child(path, du_one, &total);
        if (s != KURA_OK)
            return s;
    }
    *bytes_out = total;
    return KURA_OK;
}

/* Reads the "Key:   value ..." line of a /proc file into val (trimmed). */
static bool proc_field(const char *file, const char *key, char *val, size_t cap)
{
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return false;
    char line[512];
    size_t klen = strlen(key);
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, klen) != 0)
            continue;
        const char *p = line + klen;
        while (*p == ' ' || *p == '\t' || *p == ':')
            p++;
        snprintf(val, cap, "%s", p);
        val[strcspn(val, "\n")] = '\0';
        found = true;
    }
    fclose(f);
    return found;
}

uint64_t bench_peak_rss_bytes(void)
{
    char v[64];
    if (!proc_field("/proc/self/status", "VmHWM", v, sizeof v))
        return 0;
    return strtoull(v, NULL, 10) * 1024; /* "123456 kB" */
}

/* The type of the file system mounted at the longest mount point that prefixes `dir`. */
static void probe_fs(const char *dir, char *fs, size_t cap)
{
    snprintf(fs, cap, "unknown");
    char real[PATH_MAX];
    FILE *f = fopen("/proc/self/mounts", "r");
    if (realpath(dir, real) == NULL || f == NULL) {
        if (f != NULL)
            fclose(f);
        return;
    }
    char line[1024];
    size_t best = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char mnt[512], type[64];
        if (sscanf(line, "%*s %511s %63s", mnt, type) != 2)
            continue;
        size_t n = strlen(mnt);
        bool prefix = strcmp(mnt, "/") == 0 ||
                      (strncmp(real, mnt, n) == 0 && (real[n] == '/' || real[n] == '\0'));
        if (prefix && n >= best) {
            best = n;
            snprintf(fs, cap, "%s", type);
        }
    }
    fclose(f);
}

void bench_machine_probe(const char *dir, bench_machine *m_out)
{
    bench_machine m;
    memset(&m, 0, sizeof m);
    if (!proc_field("/proc/cpuinfo", "model name", m.cpu_model, sizeof m.cpu_model))
        snprintf(m.cpu_model, sizeof m.cpu_model, "unknown");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m.cores = cores > 0 ? (uint32_t)cores : 0;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    m.mem_bytes = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m.kernel, sizeof m.kernel, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(m.kernel, sizeof m.kernel, "unknown");
    probe_fs(dir, m.fs, sizeof m.fs);
    if (getloadavg(&m.load_avg_1m, 1) != 1)
        m.load_avg_1m = -1;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m.date, sizeof m.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    *m_out = m;
}
