/*
 * stream_spec.c - This file contains the StreamSpecification of CreateTable and UpdateTable
 * ({"StreamEnabled": bool, "StreamViewType": "KEYS_ONLY" | "NEW_IMAGE" | "OLD_IMAGE" |
 * "NEW_AND_OLD_IMAGES"}): its decoding into kura_stream_specification (the
 * view types' names are the engine's, kura_stream_view_type_name).
 *
 * The messages are DynamoDB Local 1.25.1's; the engine makes the checks it can see from the
 * C struct (engine/table_ddl.c), and this file those it cannot:
 *   {}                                             "Stream StreamEnabled was null"
 *   {"StreamEnabled": true, "StreamViewType": "BAD"}       "Invalid StreamViewType: BAD"
 *   {"StreamEnabled": true[, "StreamViewType": ""]}        the engine: "Invalid StreamViewType:
 *                                       Stream ViewType must not be null or empty when
 *                                       enabling streams."
 *   {"StreamEnabled": false, "StreamViewType": any string, "" and "BAD" included}
 *                                       the engine: "Invalid StreamViewType: Stream
 *                                       StreamEnabled was false but a StreamViewType was
 *                                       present."
 * For the last, a view type the engine cannot represent is handed over as KEYS_ONLY: all the
 * engine looks at when disabling is whether one is present.
 *
 * The first two are answered where the engine checks the specification, which is where
 * DynamoDB Local answers them too (after the key schema's checks, for instance): the engine
 * is handed an enabling specification without a view type, which it always refuses with
 * API_MSG_NO_VIEW, and api_stream_spec_result() puts this file's message in its place. So a
 * request with two mistakes is answered with the one the engine checks first, and a refused
 * specification never reaches the table, whatever else the request holds.
 *
 * The model's StreamViewType is an enum, but DynamoDB Local does not answer it with the
 * schema layer's "Member must satisfy enum value set" (a disabling request with any view type
 * gets the engine's message above), so it is a plain string in the schema.
 */
#include <string.h>

#include "api/api_int.h"

void api_stream_spec_decode(const jd_t *req, api_stream_spec *out)
{
    const jd_t *spec = jd_object_get(req, "StreamSpecification");
    memset(out, 0, sizeof *out);
    if (!spec) return;
    const jd_t *enabled = jd_object_get(spec, "StreamEnabled");
    const char *view = api_str(spec, "StreamViewType");
    out->spec.given = true;
    out->spec.stream_enabled = !enabled || jd_is_true(enabled);
    if (!enabled) { /* refused: see above */
        out->enabled_missing = true;
        return;
    }
    if (!view) return;
    for (int v = KURA_STREAM_KEYS_ONLY; v <= KURA_STREAM_NEW_AND_OLD_IMAGES; v++)
        if (strcmp(view, kura_stream_view_type_name((kura_stream_view_type)v)) == 0) {
            out->spec.stream_view_type = (kura_stream_view_type)v;
            return;
        }
    if (!out->spec.stream_enabled) /* present: the engine refuses it with its message */
        out->spec.stream_view_type = KURA_STREAM_KEYS_ONLY;
    else if (*view) /* "" stays unset: the engine's own "must not be null or empty" */
        out->invalid_view = view;
}

kura_status api_stream_spec_result(const api_stream_spec *sp, kura_status s)
{
    if (s != KURA_E_INVALID || (!sp->enabled_missing && !sp->invalid_view) ||
        strcmp(api_err_msg(), API_MSG_NO_VIEW) != 0)
        return s;
    if (sp->enabled_missing) return api_err(s, "Stream StreamEnabled was null");
    return api_err(s, "Invalid StreamViewType: %s", sp->invalid_view);
}

const char *api_stream_view_name(kura_stream_view_type v)
{
    const char *name = kura_stream_view_type_name(v);
    return name ? name : "";
}
