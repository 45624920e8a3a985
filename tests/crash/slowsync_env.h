/*
 * slowsync_env.h - an env that forwards every operation to another and gives WAL syncs the
 * latency of a disk (tests/crash/slowsync_env.c).
 *
 * The crash tests run the engine on util/io_fault over crash/nosync_env.h, where an fsync
 * takes no time, and the fault env serializes every operation under one mutex. A transaction
 * appends its pieces and syncs them before it allocates its sequence range, so with instant
 * syncs another writer almost never slips in between, and the WALs stay in sequence order:
 * the interleaving of issue 22 (a piece before records of lower sequences) does not happen.
 * Put above the fault env (its ops forward to io_fault_env()), this env sleeps before a WAL
 * sync, outside the fault env's mutex, so other threads append meanwhile as they would while
 * a real disk syncs. The fault env still decides what survives a power cut.
 *
 * A crash point hook (slowsync_set_hook) runs before a crash point is passed down: a test
 * makes things happen at a chosen point of the engine's work (crash_features_powerloss_test
 * writes at "txn.before_range", between a transaction's synced pieces and its sequence
 * range, which makes the interleaving of issue 22 certain instead of likely).
 *
 * Thread safety: as the env below; slowsync_set_delay may be called at any time;
 * slowsync_set_hook before the env is used.
 */
#ifndef KURA_TESTS_CRASH_SLOWSYNC_ENV_H
#define KURA_TESTS_CRASH_SLOWSYNC_ENV_H

#include "util/io.h"

typedef struct slowsync_env slowsync_env;

/* A new env over `inner` (borrowed; must outlive it), with no delay. NULL if out of memory. */
slowsync_env *slowsync_new(io_env *inner);
/* Frees it; every file opened through it must be closed before. NULL is a no-op. */
void slowsync_free(slowsync_env *e);
/* The env to hand the engine (owned by e). */
io_env *slowsync_io(slowsync_env *e);
/* From now on every WAL sync sleeps `us` microseconds first (0: none). */
void slowsync_set_delay(slowsync_env *e, unsigned us);
/* Every crash point calls fn(arg, name) first (from the engine's thread that passes it); a
 * status other than KURA_OK is returned instead of passing the point down. NULL: none. */
typedef kura_status (*slowsync_hook)(void *arg, const char *name);
void slowsync_set_hook(slowsync_env *e, slowsync_hook fn, void *arg);

#endif
