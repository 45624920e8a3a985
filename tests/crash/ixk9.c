/*
 * This file contains the writer threads and the options of the index crash tests' kill -9
 * children (ixk9.h). Each child is killed with SIGKILL, so nothing here is ever freed.
 */
#include "crash/ixk9.h"

#include <stdlib.h>

#include "crash/k9pipe.h"
#include "util/thread.h"

typedef struct ixk9_writer {
    const ixw *w;
    kura_db *db;
    int fd;
    uint32_t t;
    bool ack_first;
} ixk9_writer;

kura_options ixk9_options(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_SYNC;
    o.default_partitions = 4;
    o.memtable_budget_bytes = 1 << 20; /* the minimum: 128 KiB memtables */
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 512 << 10;
    o.sstable_target_bytes = 128 << 10;
    o.block_cache_bytes = 1 << 20;
    o.background_threads = 2;
    return o;
}

static void *write_loop(void *arg)
{
    ixk9_writer *cw = arg;
    char why[512];
    for (uint64_t j = ixw_next(cw->w, cw->t);; j++) {
        k9_msg m = {.type = K9_ACK, .thread = cw->t, .opno = j};
        if (cw->ack_first)
            k9_send(cw->fd, &m);
        if (ixw_exec(cw->w, cw->db, cw->t, j, why, sizeof why) != KURA_OK)
            k9_fail(cw->fd, "write", why);
        if (!cw->ack_first)
            k9_send(cw->fd, &m);
    }
    return NULL;
}

void ixk9_start_writers(const ixw *w, kura_db *db, int fd, uint32_t nwriters, bool ack_first)
{
    ixk9_writer *cw = calloc(nwriters, sizeof *cw);
    kthread *th = calloc(nwriters, sizeof *th);
    if (!cw || !th)
        k9_fail(fd, "writers", "out of memory");
    for (uint32_t t = 0; t < nwriters; t++) {
        cw[t] = (ixk9_writer){w, db, fd, t, ack_first};
        if (!kthread_start(&th[t], write_loop, &cw[t]))
            k9_fail(fd, "thread start", "out of memory");
    }
}
