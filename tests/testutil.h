/*
 * testutil.h - helpers shared by kura's tests: scratch directories, random data, and
 * assertion macros that print both operands and kura_last_error() on failure.
 *
 * Include after <cmocka.h>'s prerequisites (stdarg.h, stddef.h, stdint.h, setjmp.h).
 */
#ifndef KURA_TESTUTIL_H
#define KURA_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kura.h"

/* Creates a fresh empty directory under $KURA_TEST_TMPDIR (or /tmp) whose name starts with
 * `tag`; returns a malloc'ed path. Aborts the test on failure. */
char *test_mkdtemp(const char *tag);
/* rm -rf path (test directories only), then frees path. */
void test_rmrf(char *path);

/* Asserts a kura call returned KURA_OK; on failure prints the status and the message. */
#define assert_kura_ok(expr)                                                                   \
    do {                                                                                       \
        kura_status s_ = (expr);                                                               \
        if (s_ != KURA_OK)                                                                     \
            fail_msg("%s returned %s: %s", #expr, kura_status_str(s_), kura_last_error());     \
    } while (0)

/* Asserts a kura call returned status `want`. */
#define assert_kura_status(expr, want)                                                         \
    do {                                                                                       \
        kura_status s_ = (expr);                                                               \
        if (s_ != (want))                                                                      \
            fail_msg("%s returned %s, expected %s (%s)", #expr, kura_status_str(s_),           \
                     kura_status_str(want), kura_last_error());                                \
    } while (0)

/* Overwrites the byte at offset off of the file in place (a reader that has it open sees the
 * change). Aborts the test on failure. */
void test_poke_byte(const char *path, uint64_t off, uint8_t byte);

/* A small deterministic PRNG (splitmix64) so failures reproduce from the printed seed. */
uint64_t test_rand(uint64_t *state);
/* The seed of a test's random choices, printed to stderr as "KURA_TEST_SEED=n" so a failure
 * replays with that variable: $KURA_TEST_SEED if set (KURA_TEST_SEED=random: a fresh seed from
 * the clock and the process id), else the fixed default 1. */
uint64_t test_seed(void);

#endif
