/*
 * ixk9.h - the child side of the index crash tests' kill -9 loops (tests/crash/ixk9.c): the
 * options every such child opens with (small memtables and SSTables, so flushes, compactions
 * and index checkpoints happen within a round), and its writer threads, which run the ixw
 * model's operations and acknowledge each over the k9 pipe.
 */
#ifndef KURA_TESTS_CRASH_IXK9_H
#define KURA_TESTS_CRASH_IXK9_H

#include <stdbool.h>
#include <stdint.h>

#include "crash/ixwork.h"
#include "kura.h"

/* Sync durability, 4 partitions, 128 KiB memtables, 128 KiB SSTables, 2 background threads. */
kura_options ixk9_options(void);

/* Starts one thread per writer of `w` (0..nwriters-1) that runs its operations on db from
 * ixw_next() on and sends K9_ACK for each after it returned OK; `ack_first` sends the ACK
 * before the write instead (the canary's planted bug). The threads run until the child is
 * killed; a failed write or thread start ends the child through k9_fail(). */
void ixk9_start_writers(const ixw *w, kura_db *db, int fd, uint32_t nwriters, bool ack_first);

#endif
