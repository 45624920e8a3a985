/*
 * status.c - status names (from the X-macro table in kura.h) and the per-thread error message.
 */
#include "util/status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[4096];

const char *kura_status_str(kura_status s)
{
    switch (s) {
#define KURA_STATUS_STR_(name, value, msg)                                                      \
    case name:                                                                                 \
        return msg;
        KURA_STATUS_MAP(KURA_STATUS_STR_)
#undef KURA_STATUS_STR_
    }
    return "unknown status";
}

const char *kura_last_error(void)
{
    return last_error;
}

kura_status kura_err(kura_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

kura_status kura_status_from_errno(int err)
{
    switch (err) {
    case ENOSPC:
    case EDQUOT:
        return KURA_E_NOSPC;
    case ENOMEM:
        return KURA_E_NOMEM;
    default:
        return KURA_E_IO;
    }
}
