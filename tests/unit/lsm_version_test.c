/*
 * lsm_version_test.c - version_score: dynamic level targets, the base level that level 0
 * compacts into, and the rule that the base level never skips a level holding data.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "engine/lsm/version.h"

/* A file_meta with only the fields version_score reads (no table behind it). */
static file_meta *fake_file(uint64_t number, uint64_t size)
{
    file_meta *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->refs = 1;
    f->number = number;
    f->file_size = size;
    return f;
}

static void add(version *v, int level, uint64_t size)
{
    size_t n = v->nfiles[level];
    v->files[level] = realloc(v->files[level], (n + 1) * sizeof *v->files[level]);
    assert_non_null(v->files[level]);
    v->files[level][n] = fake_file(n + 1, size);
    v->nfiles[level] = n + 1;
}

static lsm_options opts(void)
{
    lsm_options o;
    memset(&o, 0, sizeof o);
    o.l0_compaction_trigger = 4;
    o.level1_bytes = 16u << 20;
    return o;
}

static void test_base_level(void **state)
{
    (void)state;
    lsm_options o = opts();
    version *v = version_new();
    version_score(v, &o);
    assert_int_equal(v->base_level, LSM_LEVELS - 1); /* empty: straight to the last level */

    add(v, LSM_LEVELS - 1, 200u << 20); /* 200 MiB at the bottom: L5's target is 20 MiB */
    version_score(v, &o);
    assert_int_equal(v->base_level, LSM_LEVELS - 2);

    add(v, 0, 1 << 20);
    add(v, 0, 1 << 20);
    add(v, 0, 1 << 20);
    add(v, 0, 1 << 20);
    version_score(v, &o);
    assert_int_equal(v->compaction_level, 0);
    assert_true(v->compaction_score >= 1.0);

    add(v, 2, 1 << 20); /* older data above the base level: level 0 must merge into it */
    version_score(v, &o);
    assert_int_equal(v->base_level, 2);
    version_unref(v);
}

static void test_level_targets(void **state)
{
    (void)state;
    lsm_options o = opts();
    version *v = version_new();
    add(v, LSM_LEVELS - 1, 1000u << 20); /* L5 target 100 MiB, L4 10 -> 16 MiB floor */
    add(v, LSM_LEVELS - 2, 250u << 20);  /* 2.5x its target */
    add(v, LSM_LEVELS - 3, 8u << 20);    /* half its (floored) target */
    version_score(v, &o);
    assert_int_equal(v->compaction_level, LSM_LEVELS - 2);
    assert_true(v->compaction_score > 2.4 && v->compaction_score < 2.6);
    version_unref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_level),
        cmocka_unit_test(test_level_targets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
