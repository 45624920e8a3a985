/*
 * heat_report.h - the producer of the heat report: the JSON of GET /kura/heat (docs/server.md,
 * "The heat report", is the contract) for a database, which the heat page
 * (GET /kura/heat.html, heat_page.h) renders at request time and `kura heat DIR`
 * (tools/kura_heat.c) prints.
 *
 * server/heat_report.c implements it with the engine's read-out of the capacity accounting,
 * kura_heat_report (include/kura.h).
 *
 * Thread safety: may run on any thread at once (the serving threads call it).
 */
#ifndef KURA_SERVER_HEAT_REPORT_H
#define KURA_SERVER_HEAT_REPORT_H

#include <stddef.h>

#include "kura.h"

#define HEAT_DEFAULT_WINDOW_S 60u
#define HEAT_MAX_WINDOW_S 60u /* the accounting keeps 60 seconds (engine/heat_window.h) */

/* The heat report of `db` (table: only that table and its indexes; NULL: every table) over the
 * last window_s seconds (1..HEAT_MAX_WINDOW_S) into *json_out (malloc'ed, NUL-terminated,
 * *len_out bytes; the caller frees it with free()). Errors: KURA_E_RESOURCE_NOT_FOUND (no
 * such table), KURA_E_INVALID (window_s out of range), KURA_E_NOMEM; the message in
 * kura_last_error(). */
kura_status heat_report_json(kura_db *db, const char *table, unsigned window_s, char **json_out,
                             size_t *len_out);

#endif
