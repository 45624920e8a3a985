/*
 * table_arn.c - This file contains how a request names a table (api_int.h): by its name, or
 * (as DynamoDB allows since its resource-based policies) by the table's ARN wherever the
 * model types a TableName or a RequestItems key as TableArn.
 *
 * The constraint pass lets a well-formed table ARN through (validate.c, TableArn); each
 * operation resolves it here right before its C API call, where a missing table would be
 * found missing: an ARN of the request's scope names its table; one of another region or
 * account names nothing here (each region of each account is its own set of tables), so it
 * is answered as DynamoDB answers a missing table, ResourceNotFoundException.
 *
 * Responses name a table as the request did (DynamoDB's model: ConsumedCapacity.TableName
 * "If you had specified the ARN of a table in the input, you'll see the table ARN in the
 * response"; BatchGetItem's Responses and UnprocessedKeys, BatchWriteItem's UnprocessedItems
 * and ItemCollectionMetrics are keyed as RequestItems was). The call remembers, for each table
 * it named by ARN, the first ARN it gave (api_call.tables_given), and api_table_shown()
 * answers with it.
 */
#include <string.h>

#include "api/api_int.h"

kura_status api_table_name(api_call *c, const char *given, const char **name_out)
{
    arn_parts p;
    *name_out = given;
    if (!given || !arn_split(given, &p) || p.rest) return KURA_OK; /* a name */
    if (!arn_in_scope(&p, &c->scope))
        return api_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found");
    jd_t *name = jd_stringn(c->doc, p.table, p.table_len);
    if (!c->tables_given) c->tables_given = jd_object(c->doc);
    if (!name || !c->tables_given) return API_NOMEM();
    const char *n = jd_string_value(name);
    if (!jd_object_get(c->tables_given, n)) {
        jd_t *arn = jd_string(c->doc, given);
        if (!arn || jd_object_set(c->tables_given, n, arn) != 0) return API_NOMEM();
    }
    *name_out = n;
    return KURA_OK;
}

kura_status api_table_member(api_call *c, const jd_t *obj, const char **name_out)
{
    return api_table_name(c, api_str(obj, "TableName"), name_out);
}

const char *api_table_shown(const api_call *c, const char *name)
{
    const jd_t *arn = c->tables_given && name ? jd_object_get(c->tables_given, name) : NULL;
    return arn ? jd_string_value(arn) : name;
}
