/*
 * spawn.c - starting, probing, measuring and stopping the server under test (see spawn.h).
 *
 * Everything the child needs (its argv, the log's file descriptor) is prepared before
 * fork(), so the child only dup2()s and exec()s. The port is found by binding port 0 and
 * closing the socket; another process could take it in between, which on a benchmark machine
 * shows as a server that fails to start (and is reported with its log).
 */
#include "bench/http/spawn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/http/conn.h"
#include "bench/http/dynamo.h"
#include "util/status.h"
#include "util/thread.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static kura_status free_port(uint16_t *port_out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return kura_err(KURA_E_IO, "no free loopback port: %s", strerror(e));
    }
    close(fd);
    *port_out = ntohs(a.sin_port);
    return KURA_OK;
}

/* s with every "{port}" and "{dir}" replaced; NULL without memory. The caller frees. */
static char *substitute(const char *s, const char *port, const char *dir)
{
    size_t cap = strlen(s) + 1;
    for (const char *p = s; (p = strchr(p, '{')) != NULL; p++)
        cap += strlen(port) + strlen(dir);
    char *out = malloc(cap), *o = out;
    if (!out) return NULL;
    while (*s) {
        const char *rep = !strncmp(s, "{port}", 6) ? port : !strncmp(s, "{dir}", 5) ? dir : NULL;
        if (rep) {
            o = stpcpy(o, rep);
            s += rep == port ? 6 : 5;
        } else {
            *o++ = *s++;
        }
    }
    *o = 0;
    return out;
}

static void free_argv(char **v, int argc)
{
    for (int i = 0; v && i < argc; i++)
        free(v[i]);
    free(v);
}

kura_status hb_server_start(hb_server *srv, int argc, char *const *argv, const char *dir_base,
                            const char *log_path)
{
    uint16_t port = 0;
    kura_status s = free_port(&port);
    if (s != KURA_OK) return s;
    if (!srv->dir[0]) {
        mkdir(dir_base, 0755);
        snprintf(srv->dir, sizeof srv->dir, "%s/kura-http-bench-XXXXXX", dir_base);
        if (!mkdtemp(srv->dir)) {
            s = kura_err(KURA_E_IO, "mkdtemp %s: %s", srv->dir, strerror(errno));
            srv->dir[0] = 0;
            return s;
        }
    }
    snprintf(srv->log_path, sizeof srv->log_path, "%s", log_path);
    char port_s[8];
    snprintf(port_s, sizeof port_s, "%u", port);
    char **v = calloc((size_t)argc + 1, sizeof *v);
    bool ok = v != NULL;
    for (int i = 0; ok && i < argc; i++)
        ok = (v[i] = substitute(argv[i], port_s, srv->dir)) != NULL;
    int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (!ok || log < 0) {
        free_argv(v, argc);
        if (log >= 0) close(log);
        return kura_err(KURA_E_IO, "cannot start the server: %s",
                        ok ? strerror(errno) : "out of memory");
    }
    memset(&srv->addr, 0, sizeof srv->addr);
    srv->addr.sin_family = AF_INET;
    srv->addr.sin_port = htons(port);
    srv->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv->t_spawn_ns = know_ns();
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(log, 1);
        dup2(log, 2);
        execvp(v[0], v);
        dprintf(2, "kura-http-bench: exec %s: %s\n", v[0], strerror(errno));
        _exit(127);
    }
    int e = errno;
    close(log);
    free_argv(v, argc);
    if (pid < 0) return kura_err(KURA_E_IO, "fork: %s", strerror(e));
    srv->pid = pid;
    return KURA_OK;
}

/* The last ~600 bytes of the server's log, for error messages. */
static void log_tail(const hb_server *srv, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(srv->log_path, "r");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    fseek(f, end > (long)cap - 1 ? end - (long)cap + 1 : 0, SEEK_SET);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

kura_status hb_server_wait_ready(hb_server *srv, double timeout_s, double *ms_out)
{
    hb_reqgen g;
    hb_reqgen_init(&g, &srv->addr, "-");
    kbuf req = KBUF_INIT, body = KBUF_INIT;
    if (!hb_req_item(&g, HB_OP_LIST, 0, &req)) return kura_err(KURA_E_NOMEM, "ListTables request");
    uint64_t deadline = srv->t_spawn_ns + (uint64_t)(timeout_s * 1e9);
    kura_status s = KURA_E_IO;
    int status = 0, wstatus;
    while (know_ns() < deadline) {
        if (waitpid(srv->pid, &wstatus, WNOHANG) == srv->pid) {
            srv->pid = 0;
            break;
        }
        int fd;
        if (hb_connect(&srv->addr, false, &fd, NULL) == KURA_OK) {
            s = hb_call(fd, req.data, req.len, &status, &body);
            close(fd);
            if (s == KURA_OK && status == 200) break;
            s = KURA_E_IO;
        }
        sleep_us(100);
    }
    uint64_t now = know_ns();
    kbuf_free(&req);
    kbuf_free(&body);
    if (s == KURA_OK) {
        *ms_out = (double)(now - srv->t_spawn_ns) / 1e6;
        return KURA_OK;
    }
    char tail[600];
    log_tail(srv, tail, sizeof tail);
    return kura_err(KURA_E_IO, "server %s (last HTTP status %d); its log ends with:\n%s",
                    srv->pid ? "did not answer ListTables in time" : "exited", status, tail);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path) == 0 ? 0 : -1;
}

kura_status hb_server_stop(hb_server *srv, bool remove_dir, double *ms_out, bool *clean_out)
{
    kura_status s = KURA_OK;
    bool clean = false;
    uint64_t t0 = know_ns();
    if (srv->pid > 0) {
        int wstatus = 0;
        kill(srv->pid, SIGTERM);
        pid_t r = 0;
        while ((r = waitpid(srv->pid, &wstatus, WNOHANG)) == 0 && know_ns() - t0 < 20000000000ull)
            sleep_us(200);
        if (r == 0) {
            kill(srv->pid, SIGKILL);
            waitpid(srv->pid, &wstatus, 0);
            s = kura_err(KURA_E_IO, "server %d did not stop within 20 s of SIGTERM", srv->pid);
        } else {
            clean = (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) ||
                    (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGTERM);
        }
        srv->pid = 0;
    }
    if (ms_out) *ms_out = (double)(know_ns() - t0) / 1e6;
    if (clean_out) *clean_out = clean;
    if (remove_dir && srv->dir[0]) {
        nftw(srv->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        srv->dir[0] = 0;
    }
    return s;
}

/* The value in kB of the "name:" line of /proc/PID/status, in bytes. */
static uint64_t proc_status_kb(pid_t pid, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    uint64_t v = 0;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, name, n) && line[n] == ':') v = strtoull(line + n + 1, NULL, 10) * 1024;
    if (f) fclose(f);
    return v;
}

uint64_t hb_proc_rss_bytes(pid_t pid)
{
    return proc_status_kb(pid, "VmRSS");
}

uint64_t hb_proc_hwm_bytes(pid_t pid)
{
    return proc_status_kb(pid, "VmHWM");
}

double hb_proc_cpu_seconds(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    /* after the ")" that ends the command name: state is field 3, utime 14, stime 15 */
    const char *p = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static uint64_t dir_sum;

static int sum_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag == FTW_F) dir_sum += (uint64_t)st->st_size;
    return 0;
}

uint64_t hb_dir_bytes(const char *dir)
{
    dir_sum = 0;
    nftw(dir, sum_entry, 16, FTW_PHYS);
    return dir_sum;
}
