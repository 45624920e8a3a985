/*
 * status.h - recording the message that goes with a failing kura_status.
 *
 * Every module reports failures as `return kura_err(KURA_E_CORRUPTION, "%s: bad block crc at
 * offset %llu", path, off);`. The message is kept per thread and read with kura_last_error().
 */
#ifndef KURA_UTIL_STATUS_H
#define KURA_UTIL_STATUS_H

#include "kura.h"

/* Records the printf-style message for this thread and returns `s` unchanged. */
kura_status kura_err(kura_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Maps an errno value from a failed system call to a status (ENOSPC -> KURA_E_NOSPC, ENOMEM ->
 * KURA_E_NOMEM, anything else -> KURA_E_IO). */
kura_status kura_status_from_errno(int err);

#endif
