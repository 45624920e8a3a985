/*
 * io_fault.c - the fault env's lifecycle, error-injection rules, crash triggers and counters.
 *
 * This file contains the "gate" that every operation of the fault env passes before it reaches
 * the base env (util/io_fault_ops.c), and the public functions of util/io_fault.h that arm and
 * inspect it. The gate, in order: refuses everything once the env is crashed; counts the
 * operation; if it is the mutating operation a crash_at_op waits for, crashes before it; then
 * applies the rule. Crash points go through fault_crash_point here too.
 * Power loss is in io_fault_loss.c, the bookkeeping in io_fault_state.c.
 */
#include "util/io_fault_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/status.h"

static const char *err_name(int error)
{
    switch (error) {
    case ENOSPC:
        return "ENOSPC";
    case IO_FAULT_SHORT_WRITE:
        return "short write";
    default:
        return "EIO";
    }
}

io_fault *io_fault_new(io_env *base)
{
    io_fault *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->nbuckets = 64;
    f->buckets = calloc(f->nbuckets, sizeof *f->buckets);
    if (!f->buckets) {
        free(f);
        return NULL;
    }
    f->env.ops = &fault_ops;
    f->base = io_env_or_default(base);
    kmutex_init(&f->mu);
    return f;
}

void io_fault_free(io_fault *f)
{
    if (!f)
        return;
    kmutex_lock(&f->mu);
    /* Files left open break the contract; at least close them underneath so no descriptor
     * leaks (their handles stay allocated: freeing memory a caller holds would be worse). */
    fault_files_kill(f);
    fault_recs_settle_all(f);
    fault_state_forget(f);
    kmutex_unlock(&f->mu);
    for (size_t i = 0; i < f->npoints; i++)
        free(f->points[i].name);
    free(f->points);
    free(f->zombies);
    free(f->crash_name);
    free(f->buckets);
    kmutex_destroy(&f->mu);
    free(f);
}

io_env *io_fault_env(io_fault *f)
{
    return &f->env;
}

/* ---- crashes ---- */

/* Called with mu held when a crash triggers. EXIT never returns. */
static kura_status fault_trigger(io_fault *f, io_crash_action action, const char *reason)
{
    if (action == IO_CRASH_EXIT)
        _exit(137);
    f->crashed = true;
    snprintf(f->crash_reason, sizeof f->crash_reason, "%s", reason);
    return kura_err(KURA_E_IO, "simulated crash at %s", f->crash_reason);
}

kura_status fault_crashed_err(io_fault *f, const char *what, const char *path)
{
    return kura_err(KURA_E_IO, "simulated crash at %s: %s %s refused", f->crash_reason, what,
                    path);
}

static fault_point *point_find(io_fault *f, const char *name, bool create)
{
    for (size_t i = 0; i < f->npoints; i++)
        if (!strcmp(f->points[i].name, name))
            return &f->points[i];
    if (!create)
        return NULL;
    fault_point *np = realloc(f->points, (f->npoints + 1) * sizeof *np);
    if (!np)
        return NULL;
    f->points = np;
    if (!(np[f->npoints].name = strdup(name)))
        return NULL;
    np[f->npoints].hits = 0;
    return &np[f->npoints++];
}

kura_status fault_crash_point(io_env *env, const char *name)
{
    io_fault *f = fault_of(env);
    kura_status s = KURA_OK;
    kmutex_lock(&f->mu);
    if (f->crashed) {
        s = fault_crashed_err(f, "crash point", name);
        goto out;
    }
    fault_point *p = point_find(f, name, true);
    if (!p) {
        s = kura_err(KURA_E_NOMEM, "crash point %s: out of memory", name);
        goto out;
    }
    p->hits++;
    if (f->crash_name && (!strcmp(f->crash_name, "*") || !strcmp(f->crash_name, name)) &&
        ++f->crash_seen == f->crash_nth) {
        free(f->crash_name);
        f->crash_name = NULL;
        s = fault_trigger(f, f->crash_action, name);
    }
out:
    kmutex_unlock(&f->mu);
    return s;
}

void io_fault_crash_at(io_fault *f, const char *name, uint64_t nth, io_crash_action action)
{
    char *copy = name && nth ? strdup(name) : NULL;
    kmutex_lock(&f->mu);
    free(f->crash_name);
    f->crash_name = copy; /* strdup failing disarms, which a test notices */
    f->crash_nth = nth;
    f->crash_seen = 0;
    f->crash_action = action;
    kmutex_unlock(&f->mu);
}

void io_fault_crash_at_op(io_fault *f, uint64_t nth, io_crash_action action)
{
    kmutex_lock(&f->mu);
    f->crash_op_nth = nth;
    f->crash_op_seen = 0;
    f->crash_op_action = action;
    kmutex_unlock(&f->mu);
}

bool io_fault_crashed(io_fault *f)
{
    kmutex_lock(&f->mu);
    bool c = f->crashed;
    kmutex_unlock(&f->mu);
    return c;
}

uint64_t io_fault_point_hits(io_fault *f, const char *name)
{
    uint64_t n = 0;
    kmutex_lock(&f->mu);
    for (size_t i = 0; i < f->npoints; i++)
        if (!strcmp(name, "*") || !strcmp(f->points[i].name, name))
            n += f->points[i].hits;
    kmutex_unlock(&f->mu);
    return n;
}

uint64_t io_fault_mutating_ops(io_fault *f)
{
    kmutex_lock(&f->mu);
    uint64_t n = f->mutating;
    kmutex_unlock(&f->mu);
    return n;
}

/* ---- rules and counts ---- */

static bool rule_matches(const io_fault_rule *r, io_op op, io_kind kind)
{
    return (!r->op_mask || (r->op_mask & (1u << op))) &&
           (!r->kind_mask || (r->kind_mask & (1u << kind)));
}

kura_status fault_gate(io_fault *f, io_op op, io_kind kind, bool mutating, const char *what,
                       const char *path, int *inject_out)
{
    *inject_out = 0;
    if (f->crashed)
        return fault_crashed_err(f, what, path);
    f->op_counts[op]++;
    if (mutating) {
        f->mutating++;
        if (f->crash_op_nth && ++f->crash_op_seen == f->crash_op_nth) {
            char reason[sizeof f->crash_reason];
            snprintf(reason, sizeof reason, "mutating op #%llu (%s %s)",
                     (unsigned long long)f->crash_op_nth, what, path);
            f->crash_op_nth = 0;
            return fault_trigger(f, f->crash_op_action, reason);
        }
    }
    if (!f->has_rule || !rule_matches(&f->rule, op, kind))
        return KURA_OK;
    uint64_t at = f->rule.at ? f->rule.at : 1;
    f->matching++;
    if (f->matching != at && !(f->rule.persistent && f->matching > at))
        return KURA_OK;
    f->injected++;
    int error = f->rule.error;
    if (error != ENOSPC && !(error == IO_FAULT_SHORT_WRITE && op == IO_OP_APPEND))
        error = EIO;
    *inject_out = error;
    return kura_err(error == ENOSPC ? KURA_E_NOSPC : KURA_E_IO,
                    "%s %s: injected %s (io_fault rule, matching op #%llu)", what, path,
                    err_name(error), (unsigned long long)f->matching);
}

void io_fault_set_rule(io_fault *f, const io_fault_rule *r)
{
    kmutex_lock(&f->mu);
    f->has_rule = r != NULL;
    if (r)
        f->rule = *r;
    f->matching = 0;
    f->injected = 0;
    kmutex_unlock(&f->mu);
}

uint64_t io_fault_matching_ops(io_fault *f)
{
    kmutex_lock(&f->mu);
    uint64_t n = f->matching;
    kmutex_unlock(&f->mu);
    return n;
}

uint64_t io_fault_injected(io_fault *f)
{
    kmutex_lock(&f->mu);
    uint64_t n = f->injected;
    kmutex_unlock(&f->mu);
    return n;
}

uint64_t io_fault_op_count(io_fault *f, io_op op)
{
    if ((unsigned)op >= IO_OP_COUNT)
        return 0;
    kmutex_lock(&f->mu);
    uint64_t n = f->op_counts[op];
    kmutex_unlock(&f->mu);
    return n;
}

void io_fault_reset_counts(io_fault *f)
{
    kmutex_lock(&f->mu);
    memset(f->op_counts, 0, sizeof f->op_counts);
    f->mutating = 0;
    for (size_t i = 0; i < f->npoints; i++)
        f->points[i].hits = 0;
    kmutex_unlock(&f->mu);
}

void fault_reset_after_loss(io_fault *f)
{
    f->has_rule = false;
    f->matching = 0;
    f->injected = 0;
    free(f->crash_name);
    f->crash_name = NULL;
    f->crash_op_nth = 0;
    f->crashed = false;
    f->crash_reason[0] = 0;
}
