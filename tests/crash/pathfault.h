/*
 * pathfault.h - an io_env that fails the n-th I/O operation on the files of one part of the
 * database, chosen by path (tests/crash/pathfault.c).
 *
 * util/io_fault.h selects operations by type and file kind only, and an index tree's
 * SSTables and manifests have the same kinds as its table's. This env wraps a base env (the
 * no-sync env, crash/nosync_env.h) and counts only the operations whose path contains a
 * substring, e.g. "/idx-" for the trees of secondary indexes (<db>/idx-<table>-<index>/...):
 * file operations count by the path the file was opened with, rename by either path. The
 * at-th such operation (of the types in op_mask; 0: all) fails with EIO (KURA_E_IO) or ENOSPC
 * (KURA_E_NOSPC), once or from then on, without reaching the base env; the message says
 * "injected" and names the operation and path. Every other operation passes through.
 *
 * Thread safety: any thread; one mutex guards the counters.
 */
#ifndef KURA_TESTS_CRASH_PATHFAULT_H
#define KURA_TESTS_CRASH_PATHFAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/io.h"

typedef struct pathfault pathfault;

/* A wrapper of base (borrowed) matching paths that contain `substr` (copied). NULL when out
 * of memory. No rule: nothing fails. */
pathfault *pathfault_new(io_env *base, const char *substr);
/* Frees it; every file opened through it must be closed. NULL is a no-op. */
void pathfault_free(pathfault *p);
/* The env (owned by p). */
io_env *pathfault_env(pathfault *p);

/* Fails the at-th (1-based) matching operation from now on, and every later one if
 * persistent; error EIO or ENOSPC. at == 0 clears the rule. Resets the counters. */
void pathfault_set(pathfault *p, uint64_t at, uint32_t op_mask, int error, bool persistent);
/* Matching operations since pathfault_set (or since pathfault_new), injected failures, and
 * the first failure ("append <path>"; "" if none). */
uint64_t pathfault_matching(pathfault *p);
uint64_t pathfault_injected(pathfault *p);
const char *pathfault_first(pathfault *p);
/* The io_op of the first injected failure (IO_OP_COUNT if none). */
io_op pathfault_first_op(pathfault *p);

#endif
