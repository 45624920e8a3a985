/*
 * steps.c - This file contains the progress lines of a kura-http-bench run (see steps.h).
 */
#include "bench/http/steps.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/thread.h"

static void add(hb_steps *st, hb_step_kind kind, double timed_s)
{
    assert(st->n < HB_MAX_STEPS);
    st->kind[st->n] = kind;
    st->timed_s[st->n] = timed_s;
    st->n++;
}

/* The order is hb_run's (run.h): starts, load, workloads, settle and stop, restart. */
void hb_steps_plan(hb_steps *st, const hb_config *cfg)
{
    memset(st, 0, sizeof *st);
    st->cfg = cfg;
    bench_progress_init(&st->prog);
    bool spawned = cfg->url == NULL;
    for (uint32_t i = 0; spawned && i < cfg->starts; i++)
        add(st, HB_STEP_START, 0);
    if (cfg->items > 0)
        add(st, HB_STEP_LOAD, 0);
    for (uint32_t w = 0; w < cfg->nworkloads; w++)
        for (uint32_t c = 0; c < cfg->nconns; c++)
            add(st, cfg->count ? HB_STEP_COUNTED : HB_STEP_TIMED,
                cfg->count ? 0 : cfg->warmup_s + cfg->duration_s);
    if (spawned)
        add(st, HB_STEP_TIMED, cfg->settle_s);
    if (spawned && cfg->restart)
        add(st, HB_STEP_START, 0);
}

void hb_steps_begin(hb_steps *st, const char *fmt, ...)
{
    assert(st->begun < st->n);
    uint64_t now = know_ns();
    if (st->begun > 0 && st->kind[st->begun - 1] != HB_STEP_TIMED)
        bench_progress_step_done(&st->prog, st->kind[st->begun - 1],
                                 (double)(now - st->begun_ns) / 1e9);
    st->begun_ns = now;
    uint32_t step = st->begun++;
    if (st->cfg->quiet)
        return;
    double left = 0;
    for (uint32_t i = step; i < st->n; i++)
        left += st->kind[i] == HB_STEP_TIMED ? st->timed_s[i]
                                             : bench_progress_expect(&st->prog, st->kind[i]);
    char when[64], round[32] = "", what[128];
    bench_progress_format(when, sizeof when, bench_progress_elapsed(&st->prog), left, true);
    if (st->cfg->rounds > 0)
        snprintf(round, sizeof round, ", round %u/%u", st->cfg->round, st->cfg->rounds);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kura-http-bench: %s%s, step %u/%u, %s: %s\n", st->cfg->name, round,
            step + 1, st->n, when, what);
}
