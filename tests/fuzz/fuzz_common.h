/*
 * fuzz_common.h - helpers shared by the libFuzzer targets of tests/fuzz.
 *
 * This file contains what every fuzz target needs besides its reader: a scratch file that
 * holds the current input (the readers under test open paths, not buffers), and the check
 * that a reader answered a malformed input with one of the statuses its contract allows.
 * A fuzz target is single-threaded; so are these helpers.
 */
#ifndef KURA_TESTS_FUZZ_COMMON_H
#define KURA_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "kura.h"

/*
 * Writes data[0..size) to this process's scratch file (truncating it) through the POSIX
 * io_env and returns its path, owned by the helper and the same for every call. The scratch
 * directory, $TMPDIR/kura-fuzz-<pid> (or /tmp/...), is created on the first call and removed
 * at exit. A failure to write is a broken harness, not a finding: it aborts.
 */
const char *fuzz_write_input(const uint8_t *data, size_t size);

/*
 * Aborts (so libFuzzer records a crash) unless s is one of the `nallowed` statuses in
 * `allowed`; `what` names the call in the message printed first.
 */
void fuzz_check_status(kura_status s, const kura_status *allowed, size_t nallowed,
                       const char *what);

#define FUZZ_CHECK(s, what, ...)                                                                \
    do {                                                                                        \
        static const kura_status fuzz_allowed_[] = {__VA_ARGS__};                               \
        fuzz_check_status((s), fuzz_allowed_, sizeof fuzz_allowed_ / sizeof fuzz_allowed_[0],   \
                          (what));                                                              \
    } while (0)

#endif
