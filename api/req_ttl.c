/*
 * req_ttl.c - This file contains the Time to Live operations of the JSON API:
 * UpdateTimeToLive ({"TableName", "TimeToLiveSpecification": {"Enabled", "AttributeName"}},
 * answered with the specification) and DescribeTimeToLive ({"TableName"}, answered with
 * {"TimeToLiveDescription": {"TimeToLiveStatus"[, "AttributeName"]}}). The engine
 * (engine/ttl.c) makes DynamoDB's checks of the setting; api/validate.c makes the model's.
 */
#include <string.h>

#include "api/api_int.h"

static kura_status run_update(api_call *c)
{
    const jd_t *spec = jd_object_get(c->req, "TimeToLiveSpecification");
    kura_status cs = api_check_schema_names(c->req);
    if (cs != KURA_OK) return cs;
    kura_update_time_to_live_req req = {
        .table_name = NULL,
        .enabled = api_bool(spec, "Enabled", false),
        .attribute_name = api_str(spec, "AttributeName"),
    };
    kura_status s = api_table_member(c, c->req, &req.table_name);
    if (s != KURA_OK) return s;
    if ((s = kura_update_time_to_live(c->db, &req)) != KURA_OK) return api_engine(s);
    jd_t *o = jd_object(c->doc);
    if (!o || jd_object_set(o, "Enabled", req.enabled ? jd_true(c->doc) : jd_false(c->doc)) != 0 ||
        jd_object_set(o, "AttributeName", jd_string(c->doc, req.attribute_name)) != 0)
        return API_NOMEM();
    return api_out_json(c, "TimeToLiveSpecification", o);
}

static kura_status run_describe(api_call *c)
{
    kura_time_to_live_description d;
    const char *table = NULL;
    kura_status s = api_table_member(c, c->req, &table);
    if (s != KURA_OK) return s;
    if ((s = kura_describe_time_to_live(c->db, table, &d)) != KURA_OK) return api_engine(s);
    jd_t *o = jd_object(c->doc);
    if (!o || jd_object_set(o, "TimeToLiveStatus", jd_string(c->doc, d.time_to_live_status)) != 0 ||
        (d.attribute_name &&
         jd_object_set(o, "AttributeName", jd_string(c->doc, d.attribute_name)) != 0))
        o = NULL;
    kura_time_to_live_description_free(&d);
    if (!o) return API_NOMEM();
    return api_out_json(c, "TimeToLiveDescription", o);
}

const api_op api_op_update_time_to_live = {"UpdateTimeToLive", run_update};
const api_op api_op_describe_time_to_live = {"DescribeTimeToLive", run_describe};
