/*
 * spawn.h - the server under test as a child process of kura-http-bench: a free loopback
 * port, a fresh data directory, the time from fork() to the first successful request, its
 * memory and CPU time from /proc, and a clean stop.
 *
 * The server's command line is a template: in every argument "{port}" becomes the chosen
 * port and "{dir}" the data directory, e.g.
 *   kura-server --data {dir} --port {port}
 *   node .../dynalite/cli.js --port {port} --path {dir}
 * The command is executed directly (no shell), so the child's pid is the server's and /proc
 * figures are the server's own. Its stdout and stderr go to a log file.
 */
#ifndef KURA_BENCH_HTTP_SPAWN_H
#define KURA_BENCH_HTTP_SPAWN_H

#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kura.h"

typedef struct hb_server {
    pid_t pid;               /* 0 when not running */
    struct sockaddr_in addr; /* 127.0.0.1:port */
    char dir[PATH_MAX];      /* the data directory (created by hb_server_start) */
    char log_path[PATH_MAX]; /* the server's stdout + stderr */
    uint64_t t_spawn_ns;     /* know_ns() just before fork() */
} hb_server;

/* Starts the server: a new data directory under dir_base if srv->dir is empty (else reuses
 * srv->dir, for a restart on existing data), a free port, argv[0..argc) with the
 * placeholders replaced. The log goes to log_path (appended). Does not wait for it to
 * listen: see hb_server_wait_ready. KURA_E_IO on failure. */
kura_status hb_server_start(hb_server *srv, int argc, char *const *argv, const char *dir_base,
                            const char *log_path);

/* Polls the server with ListTables as fast as possible (a connect refused is retried after
 * 100 us) until one returns HTTP 200; *ms_out gets the milliseconds since the fork. Fails
 * with KURA_E_IO if the server exits or timeout_s passes (the log's tail is in the message). */
kura_status hb_server_wait_ready(hb_server *srv, double timeout_s, double *ms_out);

/* Sends SIGTERM and waits up to 20 s for the exit (then SIGKILL). *ms_out (may be NULL) gets
 * the milliseconds the stop took; *clean_out (may be NULL) whether the exit status was 0 or
 * the server died of the SIGTERM. Removes the data directory if remove_dir. */
kura_status hb_server_stop(hb_server *srv, bool remove_dir, double *ms_out, bool *clean_out);

/* VmRSS, VmHWM (peak) of a process in bytes; 0 if /proc cannot say. */
uint64_t hb_proc_rss_bytes(pid_t pid);
uint64_t hb_proc_hwm_bytes(pid_t pid);
/* User + system CPU seconds of a process (all its threads); 0 if /proc cannot say. */
double hb_proc_cpu_seconds(pid_t pid);
/* Bytes of the files under dir (recursively). */
uint64_t hb_dir_bytes(const char *dir);

#endif
