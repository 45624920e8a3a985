/*
 * scratch.h - files and knobs shared by the crash and fault tests: the KURA_TEST_SCALE
 * factor, copying database directories, reading, damaging and rewriting single files, and
 * finding a partition's files by kind.
 *
 * These helpers work on the real file system with plain POSIX calls, on purpose: they play
 * the disk (or the person with a hex editor), not the engine, so they must not go through
 * the env the engine uses. Every failure aborts the test with a message (cmocka fail_msg);
 * in a forked child that is not running cmocka, use them only where a failure cannot happen.
 */
#ifndef KURA_TESTS_CRASH_SCRATCH_H
#define KURA_TESTS_CRASH_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* KURA_TEST_SCALE as a positive float (default 1): multiply iteration counts by it. */
double scratch_scale(void);

/* max(1, round(n * scratch_scale())). */
uint64_t scratch_scaled(uint64_t n);

/* Copies the directory tree `from` into `to` (created; must not exist or be empty). */
void scratch_copy_dir(const char *from, const char *to);

/* Reads a whole file into a malloc'ed buffer (caller frees) of *n_out bytes. */
uint8_t *scratch_read(const char *path, size_t *n_out);

/* Replaces the file at path with n bytes of p (unlink + create, no fsync). */
void scratch_write(const char *path, const void *p, size_t n);

/* Size of the file at path, or -1 if it does not exist. */
int64_t scratch_size(const char *path);

/*
 * Finds the files of directory `dir` whose names end with `pattern` (".log", ".sst",
 * "CURRENT"), or start with it when it ends with '-' ("MANIFEST-"), sorted by name, hidden
 * (dot) files excluded; returns how many and stores up to cap malloc'ed full paths in
 * paths_out (caller frees each, e.g. with scratch_free_paths).
 */
size_t scratch_find(const char *dir, const char *pattern, char **paths_out, size_t cap);

/* Frees what scratch_find stored. */
void scratch_free_paths(char **paths, size_t n);

/* "dir/name" in a malloc'ed string. */
char *scratch_join(const char *dir, const char *name);

#endif
