/*
 * damage.h - damaging one file of a copy of a database, for the corruption tests.
 *
 * This file contains the pieces a corruption test repeats for every case: a template (a
 * closed database directory built once, and the intact bytes of the file to damage), a
 * damage (a flipped bit, a zeroed 512-byte page, a truncation), making a fresh copy of the
 * template with the damage applied, and proving with a raw read of the copy that the damage
 * really is on disk (the canary against tests that pass because nothing was damaged). Also
 * the matching of error messages against the file and offset they must name.
 *
 * Files are handled with plain POSIX calls (crash/scratch.h): this is the disk, not the
 * engine. Failures abort the test (cmocka).
 */
#ifndef KURA_TESTS_CRASH_DAMAGE_H
#define KURA_TESTS_CRASH_DAMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct damage_tmpl {
    char *dir;      /* the template database, built by the test (test_mkdtemp) */
    char *rel;      /* the file to damage, relative to dir */
    uint8_t *bytes; /* its intact content */
    size_t size;
} damage_tmpl;

/* Makes the only file of dir/<subdir> whose name matches `pattern` (scratch_find) the
 * template's target and reads its intact bytes. Fails the test unless exactly one matches. */
void damage_tmpl_target(damage_tmpl *t, const char *subdir, const char *pattern);

/* Removes the template directory and frees t's fields. */
void damage_tmpl_free(damage_tmpl *t);

typedef enum { DMG_FLIP, DMG_ZERO_PAGE, DMG_TRUNCATE } damage_kind;

typedef struct damage {
    damage_kind kind;
    uint64_t off; /* the byte to flip, the page start, or the new length */
    uint8_t bit;  /* DMG_FLIP: which bit */
} damage;

typedef struct damage_case {
    char *dir;      /* the damaged copy (test_mkdtemp) */
    char *path;     /* the damaged file in it */
    uint64_t first; /* the first byte that differs from the template (a truncation: the new
                       length) */
    char what[200]; /* "<file>, <damage> (seed <seed>)", for messages */
} damage_case;

/* Copies the template to a fresh directory with damage d applied to its target, and checks
 * with a raw read that the file on disk differs from the intact one. Returns false (nothing
 * created) if d would change nothing, e.g. zeroing a page of zeros. */
bool damage_copy(const damage_tmpl *t, damage d, uint64_t seed, damage_case *c_out);

/* Removes the copy and frees c's fields. */
void damage_case_done(damage_case *c);

enum { DAMAGE_ANY_OFFSET = -1, DAMAGE_NO_OFFSET = -2 };

/* True if msg names `name` and "offset <off>" exactly (off >= 0), "offset " with any value
 * (DAMAGE_ANY_OFFSET), or just the name (DAMAGE_NO_OFFSET). */
bool damage_names(const char *msg, const char *name, int64_t off);

/* The last component of a path. */
const char *damage_base_name(const char *path);

#endif
