/*
 * heat_report.c - This file contains the producer of the heat report (heat_report.h) for the
 * heat endpoints and `kura heat DIR`: the engine's read-out of the capacity accounting,
 * kura_heat_report, with the window checked as the endpoints document it.
 */
#include "server/heat_report.h"

#include <string.h>

#include "util/status.h"

kura_status heat_report_json(kura_db *db, const char *table, unsigned window_s, char **json_out,
                             size_t *len_out)
{
    if (window_s < 1 || window_s > HEAT_MAX_WINDOW_S)
        return kura_err(KURA_E_INVALID, "window must be a whole number of seconds from 1 to %u",
                        HEAT_MAX_WINDOW_S);
    char *json = NULL;
    kura_status s = kura_heat_report(db, table, window_s, &json);
    if (s != KURA_OK)
        return s;
    *json_out = json;
    *len_out = strlen(json);
    return KURA_OK;
}
