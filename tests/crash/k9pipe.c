/*
 * k9pipe.c - the messages of a kill -9 loop's child to its parent (see k9pipe.h).
 */
#include "crash/k9pipe.h"

#include "testutil.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <unistd.h>

#include "util/thread.h"

_Static_assert(sizeof(k9_msg) <= 512, "a message must be written atomically (PIPE_BUF)");

void k9_send(int fd, const k9_msg *m)
{
    if (write(fd, m, sizeof *m) != (ssize_t)sizeof *m)
        _exit(4); /* the parent is gone */
}

void k9_fail(int fd, const char *what, const char *why)
{
    k9_msg m = {.type = K9_ERROR};
    snprintf(m.text, sizeof m.text, "%s: %s", what, why);
    k9_send(fd, &m);
    _exit(3);
}

bool k9_read(int fd, k9_msg *m)
{
    size_t got = 0;
    while (got < sizeof *m) {
        ssize_t n = read(fd, (char *)m + got, sizeof *m - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

bool k9_pump(int fd, k9_fn fn, void *arg, const bool *started, uint64_t deadline_ns,
             uint64_t delay_ns)
{
    for (;;) {
        uint64_t now = know_ns();
        if (deadline_ns && now >= deadline_ns)
            return true;
        int timeout = deadline_ns ? (int)((deadline_ns - now) / 1000000 + 1) : 60000;
        struct pollfd pfd = {fd, POLLIN, 0};
        int n = poll(&pfd, 1, timeout);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && !deadline_ns)
            fail_msg("the child did not start within 60 s");
        if (n <= 0)
            continue;
        k9_msg m;
        if (!k9_read(fd, &m))
            return false;
        bool was_started = *started;
        fn(arg, &m);
        if (!was_started && *started && !deadline_ns)
            deadline_ns = know_ns() + delay_ns;
    }
}

void k9_finish(int fd, int pid, bool alive, k9_fn fn, void *arg, const char *error)
{
    if (alive)
        kill(pid, SIGKILL);
    k9_msg m;
    while (k9_read(fd, &m))
        fn(arg, &m);
    close(fd);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        fail_msg("the child ended by itself (status 0x%x) before the kill: %s", status,
                 error[0] ? error : "no message");
}
