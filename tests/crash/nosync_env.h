/*
 * nosync_env.h - a POSIX io_env whose fsyncs do nothing, as the base of a fault env.
 *
 * This file contains the env the crash and fault tests put under util/io_fault.h. The fault
 * env decides what survives a simulated power cut from its own bookkeeping (bytes appended
 * and synced per file, namespace changes per directory), never from the disk, so the real
 * fdatasync(2) and directory fsyncs below it only cost time: ~1.5 ms each on the test
 * machine, which would make a sweep over a thousand cut points take many minutes. Every
 * other operation goes to io_env_posix() unchanged.
 *
 * Setting KURA_TEST_REAL_SYNC=1 in the environment makes nosync_env() return the POSIX env
 * itself (real syncs), to rule out the shortcut when chasing a failure.
 *
 * Never use it under an engine whose durability a test checks without a fault env.
 */
#ifndef KURA_TESTS_CRASH_NOSYNC_ENV_H
#define KURA_TESTS_CRASH_NOSYNC_ENV_H

#include "util/io.h"

/* The process-wide no-sync env (never freed), or the POSIX env with KURA_TEST_REAL_SYNC=1. */
io_env *nosync_env(void);

#endif
