/*
 * req_settings.c - This file contains the table settings of the JSON API shared by
 * CreateTable, UpdateTable and their GSIs (req_tables.c): the request members
 * OnDemandThroughput, WarmThroughput, SSESpecification and TableClass (decoding into
 * kura.h's structs), and their DescribeTable form: OnDemandThroughput, WarmThroughput
 * (with its Status), SSEDescription and TableClassSummary, in the model's member order. The
 * engine (engine/table_settings.c) makes DynamoDB's checks of their values.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

/* OnDemandThroughput / WarmThroughput / SSESpecification / TableClass of `obj` (a request or
 * an index), `given` false when absent. */
kura_on_demand_throughput api_decode_on_demand(const jd_t *obj)
{
    const jd_t *x = jd_object_get(obj, "OnDemandThroughput");
    return (kura_on_demand_throughput){x != NULL,
                                       jd_integer_value(jd_object_get(x, "MaxReadRequestUnits")),
                                       jd_integer_value(jd_object_get(x, "MaxWriteRequestUnits"))};
}

kura_warm_throughput api_decode_warm(const jd_t *obj)
{
    const jd_t *x = jd_object_get(obj, "WarmThroughput");
    return (kura_warm_throughput){x != NULL,
                                  jd_integer_value(jd_object_get(x, "ReadUnitsPerSecond")),
                                  jd_integer_value(jd_object_get(x, "WriteUnitsPerSecond"))};
}

kura_sse_specification api_decode_sse(const jd_t *req)
{
    const jd_t *x = jd_object_get(req, "SSESpecification");
    const char *type = api_str(x, "SSEType");
    return (kura_sse_specification){.given = x != NULL,
                                    .has_enabled = jd_object_get(x, "Enabled") != NULL,
                                    .enabled = api_bool(x, "Enabled", false),
                                    .sse_type = !type                  ? KURA_SSE_UNSET
                                                : !strcmp(type, "KMS") ? KURA_SSE_KMS
                                                                       : KURA_SSE_AES256,
                                    .kms_master_key_id = api_str(x, "KMSMasterKeyId")};
}

kura_table_class api_decode_table_class(const jd_t *req)
{
    const char *c = api_str(req, "TableClass");
    return !c                       ? KURA_TABLE_CLASS_UNSET
           : !strcmp(c, "STANDARD") ? KURA_TABLE_CLASS_STANDARD
                                    : KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS;
}

/* "OnDemandThroughput" and "WarmThroughput" (with its Status) when given. */
bool api_settings_json(jd_doc *doc, jd_t *o, const kura_on_demand_throughput *od,
                       const kura_warm_throughput *w, const char *status)
{
    if (od->given) {
        jd_t *x = jd_object(doc);
        if (!x ||
            jd_object_set(x, "MaxReadRequestUnits", jd_integer(doc, od->max_read_request_units)) ||
            jd_object_set(x, "MaxWriteRequestUnits",
                          jd_integer(doc, od->max_write_request_units)) ||
            jd_object_set(o, "OnDemandThroughput", x))
            return false;
    }
    if (w->given && status) {
        jd_t *x = jd_object(doc);
        if (!x ||
            jd_object_set(x, "ReadUnitsPerSecond", jd_integer(doc, w->read_units_per_second)) ||
            jd_object_set(x, "WriteUnitsPerSecond", jd_integer(doc, w->write_units_per_second)) ||
            jd_object_set(x, "Status", jd_string(doc, status)) ||
            jd_object_set(o, "WarmThroughput", x))
            return false;
    }
    return true;
}

/* SSEDescription (a KMS key) and TableClassSummary (a class was given), in DynamoDB's place:
 * after the streams, before DeletionProtectionEnabled. */
bool api_sse_class_json(jd_doc *doc, jd_t *o, const char *table_arn,
                        const kura_table_description *d)
{
    if (d->kms_master_key_arn) {
        /* the key's ARN in the request's region and account, as the table's (engine/arn.h) */
        char *key_arn = arn_kms(table_arn, d->kms_master_key_id);
        jd_t *x = key_arn ? jd_object(doc) : NULL;
        bool ok = x && !jd_object_set(x, "Status", jd_string(doc, "ENABLED")) &&
                  !jd_object_set(x, "SSEType", jd_string(doc, "KMS")) &&
                  !jd_object_set(x, "KMSMasterKeyArn", jd_string(doc, key_arn)) &&
                  !jd_object_set(o, "SSEDescription", x);
        free(key_arn);
        if (!ok)
            return false;
    }
    if (d->table_class != KURA_TABLE_CLASS_UNSET) {
        jd_t *x = jd_object(doc);
        const char *c =
            d->table_class == KURA_TABLE_CLASS_STANDARD ? "STANDARD" : "STANDARD_INFREQUENT_ACCESS";
        if (!x || jd_object_set(x, "TableClass", jd_string(doc, c)) ||
            (d->table_class_last_update_date_time > 0 &&
             jd_object_set(x, "LastUpdateDateTime",
                           jd_real(doc, d->table_class_last_update_date_time))) ||
            jd_object_set(o, "TableClassSummary", x))
            return false;
    }
    return true;
}
