/*
 * recover.c - the `recover` workload: how long an engine takes to reopen after a crash
 * with a full write buffer.
 *
 * The process forks a writer that opens a fresh database with write buffers of
 * BENCH_RECOVER_MEMTABLE_BYTES (so nothing is flushed), puts ~64 MiB of values
 * (BENCH_RECOVER_VALUE_BYTES; keys 0..n-1 in order) with the WAL on and no sync, writes
 * "ready" on a pipe and waits. The parent kills it with SIGKILL (the WAL bytes are in the
 * page cache: a process crash loses nothing that was acknowledged), then times open() plus
 * one get of the last key written, which must be found with its full value. The figure is
 * in seconds; ops = 1; MB/s is the logical bytes written over the time to reopen.
 *
 * The writer is forked before this process opens any engine, so it starts with no engine
 * threads or locks inherited (runner.c forks every workload from the single-threaded
 * parent for the same reason).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/keys.h"
#include "bench/workloads.h"
#include "util/status.h"
#include "util/thread.h"

/* Writes a whole line to the pipe (best effort: the parent treats EOF as a failure). */
static void rc_say(int fd, const char *line)
{
    size_t n = strlen(line);
    while (n > 0) {
        ssize_t w = write(fd, line, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        line += w;
        n -= (size_t)w;
    }
}

static kura_status rc_write_all(const bench_engine *e, bench_sess *sess,
                                const bench_config *cfg, uint64_t n)
{
    bench_values vals;
    kura_status s = bench_values_init(&vals, cfg->value_size, cfg->seed);
    if (s != KURA_OK)
        return s;
    uint8_t key[BENCH_MAX_KEY_SIZE];
    size_t vpos = 0;
    for (uint64_t i = 0; i < n && s == KURA_OK; i++) {
        bench_key_format(key, cfg->key_size, i);
        s = e->put(sess, key, cfg->key_size, bench_values_next(&vals, &vpos), cfg->value_size);
    }
    bench_values_free(&vals);
    return s;
}

/* The forked writer: never returns; it is killed, or exits 1 after reporting an error. */
static void rc_writer(const bench_engine *e, const bench_engine_opts *o,
                      const bench_config *cfg, const char *dir, uint64_t n, int fd)
{
    bench_db *db = NULL;
    bench_sess *sess = NULL;
    kura_status s = e->open(dir, o, &db);
    if (s == KURA_OK)
        s = e->sess_open(db, &sess);
    if (s == KURA_OK)
        s = rc_write_all(e, sess, cfg, n);
    if (s == KURA_OK) {
        rc_say(fd, "ready\n");
        for (;;)
            pause(); /* SIGKILL ends this, with the database open */
    }
    char line[600];
    snprintf(line, sizeof line, "%s: %s\n", kura_status_str(s), kura_last_error());
    rc_say(fd, line);
    _exit(1);
}

/* Reads the writer's one line into buf (without the newline). */
static void rc_read_line(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t r = read(fd, buf + len, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || buf[len] == '\n')
            break;
        len++;
    }
    buf[len] = '\0';
}

/* Runs the writer to "ready" and kills it. */
static kura_status rc_crash_writer(const bench_engine *e, const bench_engine_opts *o,
                                   const bench_config *cfg, const char *dir, uint64_t n)
{
    int fds[2];
    if (pipe(fds) != 0)
        return kura_err(kura_status_from_errno(errno), "pipe: %s", strerror(errno));
    fflush(NULL); /* the child must not write our buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return kura_err(kura_status_from_errno(errno), "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        rc_writer(e, o, cfg, dir, n, fds[1]);
    }
    close(fds[1]);
    char line[600];
    rc_read_line(fds[0], line, sizeof line);
    close(fds[0]);
    kill(pid, SIGKILL); /* also when the writer failed and is exiting by itself */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (strcmp(line, "ready") != 0)
        return kura_err(KURA_E_IO, "recover writer failed: %s",
                        line[0] ? line : "it died before it was ready");
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        return kura_err(KURA_E_IO, "recover writer was not killed by SIGKILL (status %d)",
                        status);
    return KURA_OK;
}

/* Times open + one get of the last key; the value must be there. */
static kura_status rc_reopen(const bench_engine *e, const bench_engine_opts *o,
                             const bench_config *cfg, const char *dir, uint64_t n,
                             double *seconds_out)
{
    uint8_t key[BENCH_MAX_KEY_SIZE];
    bench_key_format(key, cfg->key_size, n - 1);
    kbuf val = KBUF_INIT;
    bool found = false;
    bench_db *db = NULL;
    bench_sess *sess = NULL;
    uint64_t t0 = know_ns();
    kura_status s = e->open(dir, o, &db);
    if (s == KURA_OK)
        s = e->sess_open(db, &sess);
    if (s == KURA_OK)
        s = e->get(sess, key, cfg->key_size, &val, &found);
    uint64_t t1 = know_ns();
    if (s == KURA_OK && (!found || val.len != cfg->value_size))
        s = kura_err(KURA_E_CORRUPTION, "after recovery key %.*s is %s", (int)cfg->key_size,
                     (const char *)key, found ? "the wrong size" : "missing");
    free(val.data);
    if (db != NULL) {
        e->sess_close(sess);
        kura_status cs = e->close(db);
        if (s == KURA_OK)
            s = cs;
    }
    if (s == KURA_OK)
        *seconds_out = (double)(t1 - t0) / 1e9;
    return s;
}

kura_status bench_recover_run(const bench_workload *wl, const bench_engine *e,
                              const bench_config *cfg, const char *dir, bench_run *run_out)
{
    bench_engine_opts o;
    bench_workload_engine_opts(cfg, wl, &o);
    uint64_t n = (BENCH_RECOVER_VALUE_BYTES + cfg->value_size - 1) / cfg->value_size;
    if (!bench_key_fits(cfg->key_size, n))
        return kura_err(KURA_E_INVALID, "recover writes %llu keys: --key-size %u is too small",
                        (unsigned long long)n, cfg->key_size);
    kura_status s = rc_crash_writer(e, &o, cfg, dir, n);
    double seconds = 0;
    if (s == KURA_OK)
        s = rc_reopen(e, &o, cfg, dir, n, &seconds);
    if (s != KURA_OK)
        return s;
    bench_run run;
    memset(&run, 0, sizeof run);
    run.state = BENCH_RUN_OK;
    run.threads = 1;
    run.ops = 1;
    run.found = 1;
    run.bytes = n * ((uint64_t)cfg->key_size + cfg->value_size);
    run.seconds = seconds;
    run.p50_us = run.p99_us = seconds * 1e6;
    bench_run_finish(&run);
    *run_out = run;
    return KURA_OK;
}
