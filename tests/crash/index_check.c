/*
 * index_check.c - the index checker of the crash, fault and unit tests: a thin wrapper over
 * the engine's index check (engine/check.c check_indexes, the part of `kura check` that
 * compares every secondary index of a table with its items at one snapshot,
 * engine/table_verify.c), so that the tests and the tool share one implementation; and the
 * whole check (kura_check) for the tests that run it after every recovery. The first problem
 * found becomes the error's message.
 */
#include "index_check.h"

#include <stdio.h>
#include <string.h>

#include "engine/check_int.h"
#include "util/status.h"

typedef struct ic_first {
    char line[2048];
    bool any;
} ic_first;

static void ic_line(void *arg, kura_check_severity sev, const char *line)
{
    ic_first *f = arg;
    if (sev == KURA_CHECK_PROBLEM && !f->any) {
        snprintf(f->line, sizeof f->line, "%s", line);
        f->any = true;
    }
}

kura_status index_check_table(kura_db *db, const char *table_name, uint64_t wait_ms)
{
    ic_first first = {"", false};
    kura_check_summary sum;
    kura_status s = check_indexes(db, table_name, wait_ms, ic_line, &first, &sum);
    if (s != KURA_OK || sum.problems == 0)
        return s;
    return kura_err(KURA_E_CORRUPTION, "%s (%llu missing, %llu extra, %llu stale entries; %llu "
                                       "problems)",
                    first.line, (unsigned long long)sum.missing_entries,
                    (unsigned long long)sum.extra_entries, (unsigned long long)sum.stale_entries,
                    (unsigned long long)sum.problems);
}

kura_status index_check_all(kura_db *db)
{
    ic_first first = {"", false};
    kura_check_summary sum;
    kura_status s = kura_check(db, NULL, ic_line, &first, &sum);
    if (s != KURA_OK || sum.problems == 0)
        return s;
    return kura_err(KURA_E_CORRUPTION, "kura_check: %s (%llu problems)", first.line,
                    (unsigned long long)sum.problems);
}
