/*
 * runner.c - the loop over (repeat, engine, workload), one forked process per run (why:
 * runner.h). Repeats are the outer loop, so slow drift of the machine (page cache, other
 * load) spreads over all engines rather than landing on one.
 *
 * After a run fails, the later workloads of the same (repeat, engine) do not run (their
 * data would be whatever the failure left) until a workload that starts fresh.
 *
 * Each run's progress line carries the time left, estimated from the runs done so far
 * (progress.h): a run of an (engine, workload) is expected to take as long as that pair
 * took in the earlier rounds, so from the second round on the estimate is close.
 */
#include "bench/runner.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/engine.h"
#include "bench/progress.h"
#include "bench/sys.h"
#include "bench/workloads.h"
#include "util/status.h"
#include "util/thread.h"

static void rn_fail(bench_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rn_fail(bench_run *run, const char *fmt, ...)
{
    memset(run, 0, sizeof *run);
    run->state = BENCH_RUN_FAILED;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run->error, sizeof run->error, fmt, ap);
    va_end(ap);
}

/* In the child: runs the workload, measures the directory and the peak RSS, reports. */
static void rn_child(int fd, const bench_workload *wl, const bench_engine *e,
                     const bench_config *cfg, uint32_t repeat, const char *dir)
{
    bench_run run;
    memset(&run, 0, sizeof run);
    kura_status s = bench_workload_run(wl, e, cfg, repeat, dir, &run);
    if (s == KURA_OK) /* the engine is closed by now */
        s = bench_fs_du(dir, &run.bytes_on_disk);
    if (s != KURA_OK)
        rn_fail(&run, "%s: %s", kura_status_str(s), kura_last_error());
    run.peak_rss_bytes = bench_peak_rss_bytes();
    const char *p = (const char *)&run;
    size_t left = sizeof run;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        left -= (size_t)w;
    }
    close(fd);
}

/* Reads up to n bytes until EOF; returns how many arrived. */
static size_t rn_read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

static void rn_describe_status(int status, char *buf, size_t cap)
{
    if (WIFSIGNALED(status))
        snprintf(buf, cap, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
}

static void rn_fork_run(const bench_workload *wl, const bench_engine *e,
                        const bench_config *cfg, uint32_t repeat, const char *dir,
                        bench_run *run)
{
    int fds[2];
    if (pipe(fds) != 0) {
        rn_fail(run, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL); /* the child must not write our buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        rn_fail(run, "fork: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        rn_child(fds[1], wl, e, cfg, repeat, dir);
        exit(0); /* exit, not _exit: sanitizer builds check the child for leaks */
    }
    close(fds[1]);
    size_t got = rn_read_all(fds[0], run, sizeof *run);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    char how[128];
    rn_describe_status(status, how, sizeof how);
    if (got != sizeof *run)
        rn_fail(run, "the run's process %s before it reported", how);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rn_fail(run, "the run's process %s after it reported (see its stderr)", how);
}

/* The time left after the run at index `idx` (runs happen in index order). */
static double rn_left_s(const bench_config *cfg, const bench_progress *prog, size_t idx)
{
    size_t nkinds = cfg->nengines * cfg->nworkloads;
    size_t nruns = cfg->repeat * nkinds;
    double left = 0;
    for (size_t i = idx + 1; i < nruns; i++)
        left += bench_progress_expect(prog, i % nkinds);
    return left;
}

static void rn_progress(const bench_config *cfg, uint32_t r, size_t ei, size_t w,
                        const bench_run *run, const bench_progress *prog)
{
    if (cfg->quiet && run->state != BENCH_RUN_FAILED)
        return;
    const bench_engine *e = cfg->engines[ei];
    const bench_workload *wl = cfg->workloads[w];
    size_t idx = bench_run_index(cfg, r, ei, w);
    size_t nruns = cfg->repeat * cfg->nengines * cfg->nworkloads;
    char total[24], when[64];
    int width = snprintf(total, sizeof total, "%zu", nruns); /* keeps the columns aligned */
    bench_progress_format(when, sizeof when, bench_progress_elapsed(prog),
                          rn_left_s(cfg, prog, idx), true);
    fprintf(stderr, "kura-bench: round %u/%u, run %*zu/%s, %s: %-8s %-12s ", r + 1,
            cfg->repeat, width, idx + 1, total, when, e->name, wl->name);
    char found[48] = "";
    if (wl->kind == BENCH_WL_READ || wl->kind == BENCH_WL_READ_MISSING ||
        wl->kind == BENCH_WL_SEEK)
        snprintf(found, sizeof found, "  found %llu", (unsigned long long)run->found);
    if (run->state == BENCH_RUN_SKIPPED)
        fprintf(stderr, "skipped: %s\n", run->error);
    else if (run->state == BENCH_RUN_FAILED)
        fprintf(stderr, "FAILED: %s\n", run->error);
    else
        fprintf(stderr,
                "%11.0f ops/s %8.2f MB/s  p50 %.2f us  p99 %.2f us  %.3f s  disk %.1f MiB  "
                "rss %.1f MiB%s\n",
                run->ops_per_sec, run->mb_per_sec, run->p50_us, run->p99_us, run->seconds,
                (double)run->bytes_on_disk / 1048576.0,
                (double)run->peak_rss_bytes / 1048576.0, found);
}

/* Runs the workload list of one (repeat, engine) in `dir`; returns the failures. */
static size_t rn_engine(const bench_config *cfg, uint32_t r, size_t ei, const char *dir,
                        bench_run *runs, bench_progress *prog)
{
    const bench_engine *e = cfg->engines[ei];
    const char *broken = NULL; /* the workload whose failure left the data unknown */
    size_t failed = 0;
    kura_status s = bench_fs_rmrf(dir);
    if (s == KURA_OK)
        s = bench_fs_mkdirs(dir);
    for (size_t w = 0; w < cfg->nworkloads; w++) {
        const bench_workload *wl = cfg->workloads[w];
        bench_run *run = &runs[bench_run_index(cfg, r, ei, w)];
        memset(run, 0, sizeof *run);
        uint64_t t0 = know_ns();
        const char *skip = bench_workload_skip_reason(wl, e);
        if (skip != NULL) {
            run->state = BENCH_RUN_SKIPPED;
            snprintf(run->error, sizeof run->error, "%s", skip);
        } else if (s != KURA_OK) {
            rn_fail(run, "cannot prepare %s: %s", dir, kura_last_error());
        } else {
            if (wl->fresh) {
                broken = NULL;
                if ((s = bench_fs_rmrf(dir)) == KURA_OK)
                    s = bench_fs_mkdirs(dir);
            }
            if (s != KURA_OK)
                rn_fail(run, "cannot prepare %s: %s", dir, kura_last_error());
            else if (broken != NULL)
                rn_fail(run, "not run: %s failed before it", broken);
            else
                rn_fork_run(wl, e, cfg, r, dir, run);
        }
        if (run->state == BENCH_RUN_FAILED) {
            failed++;
            if (broken == NULL)
                broken = wl->name;
        }
        bench_progress_step_done(prog, ei * cfg->nworkloads + w,
                                 (double)(know_ns() - t0) / 1e9);
        rn_progress(cfg, r, ei, w, run, prog);
    }
    if (bench_fs_rmrf(dir) != KURA_OK)
        fprintf(stderr, "kura-bench: warning: %s\n", kura_last_error());
    return failed;
}

size_t bench_runner_run(const bench_config *cfg, bench_run *runs)
{
    size_t failed = 0;
    bench_progress prog;
    bench_progress_init(&prog);
    for (uint32_t r = 0; r < cfg->repeat; r++) {
        for (size_t e = 0; e < cfg->nengines; e++) {
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%s/r%u-%s", cfg->dir, r + 1, cfg->engines[e]->name);
            failed += rn_engine(cfg, r, e, dir, runs, &prog);
        }
    }
    return failed;
}
