/*
 * k9pipe.h - the pipe between a forked child that writes and the parent that kills it with
 * SIGKILL (tests/crash/k9pipe.c), for the kill -9 loops of the index crash tests.
 *
 * The child sends fixed-size messages (smaller than PIPE_BUF, so each write(2) is atomic and
 * a SIGKILL never leaves half of one): STARTED when its kill timer should start, ACK after a
 * write returned OK, STATS and EVENT with test-defined figures, ERROR before it exits on a
 * failure. The parent reads them until a deadline (k9_pump), kills the child, and reads the
 * rest (k9_read until it returns false).
 */
#ifndef KURA_TESTS_CRASH_K9PIPE_H
#define KURA_TESTS_CRASH_K9PIPE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { K9_STARTED = 1, K9_ACK, K9_STATS, K9_EVENT, K9_ERROR } k9_type;

typedef struct k9_msg {
    uint32_t type;
    uint32_t thread;  /* ACK: the writer */
    uint64_t opno;    /* ACK: its operation */
    uint64_t v[4];    /* STATS, EVENT: the test's figures */
    char text[200];   /* ERROR: what failed */
} k9_msg;

/* Child: sends m; _exit(4) if the parent is gone. */
void k9_send(int fd, const k9_msg *m);
/* Child: sends ERROR "what: why" and _exit(3). */
void k9_fail(int fd, const char *what, const char *why) __attribute__((noreturn));

/* Parent: reads one message; false at the end of the pipe. */
bool k9_read(int fd, k9_msg *m);

/* Parent: hands every message to fn until deadline_ns (know_ns clock), or, with deadline_ns
 * 0, until *started becomes true (fn sets it) and then delay_ns more; false if the pipe ended
 * first. Fails the test if the child does not start within 60 s. */
typedef void (*k9_fn)(void *arg, const k9_msg *m);
bool k9_pump(int fd, k9_fn fn, void *arg, const bool *started, uint64_t deadline_ns,
             uint64_t delay_ns);
/* Parent: kills the child `pid` if `alive` (k9_pump's answer), hands fn the rest of its
 * messages, closes fd and reaps the child; fails the test unless SIGKILL ended it, with
 * `error` (the child's ERROR text as fn kept it; read after the messages) in the message. */
void k9_finish(int fd, int pid, bool alive, k9_fn fn, void *arg, const char *error);

#endif
