/*
 * sys.h - what kura-bench needs from the operating system: directory trees (create, remove,
 * measure), the peak memory of the process, and a description of the machine.
 *
 * kura-bench is a harness around several engines, most of which do their own I/O; these
 * helpers work on whole directory trees the engines left behind and are not part of kura's
 * storage path, so they use POSIX directly rather than util/io.h.
 */
#ifndef KURA_BENCH_SYS_H
#define KURA_BENCH_SYS_H

#include <stdint.h>

#include "kura.h"

/* rm -rf: removes path and everything below it; a missing path is KURA_OK. */
kura_status bench_fs_rmrf(const char *path);
/* mkdir -p. */
kura_status bench_fs_mkdirs(const char *path);
/* The sum of the sizes of the regular files under path (a missing path is 0 bytes). */
kura_status bench_fs_du(const char *path, uint64_t *bytes_out);

/* VmHWM of this process (the peak resident set) in bytes; 0 if /proc cannot tell. */
uint64_t bench_peak_rss_bytes(void);

typedef struct bench_machine {
    char cpu_model[128];
    uint32_t cores; /* online CPUs */
    uint64_t mem_bytes;
    char kernel[256];
    char fs[64]; /* file-system type of the benchmark directory, e.g. "ext4" */
    char date[32]; /* UTC, ISO 8601 */
    double load_avg_1m; /* other load on the machine when the benchmark started; -1 unknown */
} bench_machine;

/* Describes this machine and the file system that holds `dir` (which must exist). Fields
 * that cannot be found read "unknown" (or 0). */
void bench_machine_probe(const char *dir, bench_machine *m_out);

#endif
