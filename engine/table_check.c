/*
 * table_check.c - This file contains DynamoDB's checks of the CreateTable and UpdateTable
 * parameters kura implements: the table name, the key schema against the attribute
 * definitions, the billing mode and throughput, with DynamoDB's messages (as dynalite
 * reproduces them). The secondary indexes are table_check_index.c. Pure: no state.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine/table_int.h"
#include "util/status.h"

enum { NAME_MIN = 3, NAME_MAX = 255, ATTR_NAME_MAX = 255 };
const uint64_t TABLE_CAPACITY_MAX = 1000000000000ull;

kura_status table_name_check(const char *name, const char *param)
{
    if (!name)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value null at '%s' failed to satisfy "
                        "constraint: Member must not be null",
                        param);
    size_t n = strlen(name);
    if (n < NAME_MIN || n > NAME_MAX)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%s' at '%s' failed to satisfy "
                        "constraint: Member must have length %s than or equal to %d",
                        name, param, n < NAME_MIN ? "greater" : "less",
                        n < NAME_MIN ? NAME_MIN : NAME_MAX);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return kura_err(KURA_E_INVALID,
                            "1 validation error detected: Value '%s' at '%s' failed to satisfy "
                            "constraint: Member must satisfy regular expression pattern: "
                            "[a-zA-Z0-9_.-]+",
                            name, param);
    }
    return KURA_OK;
}

kura_status table_check_billing(const kura_create_table_req *r)
{
    if (r->billing_mode == KURA_BILLING_PAY_PER_REQUEST) {
        if (r->has_provisioned_throughput)
            return kura_err(KURA_E_INVALID,
                            "One or more parameter values were invalid: Neither "
                            "ReadCapacityUnits nor WriteCapacityUnits can be specified when "
                            "BillingMode is PAY_PER_REQUEST");
        return KURA_OK;
    }
    if (!r->has_provisioned_throughput || !r->read_capacity_units || !r->write_capacity_units)
        return kura_err(KURA_E_INVALID,
                        "One or more parameter values were invalid: ReadCapacityUnits and "
                        "WriteCapacityUnits must both be specified when BillingMode is "
                        "PROVISIONED");
    if (r->read_capacity_units > TABLE_CAPACITY_MAX)
        return kura_err(KURA_E_INVALID, "Given value %" PRIu64
                        " for ReadCapacityUnits is out of bounds", r->read_capacity_units);
    if (r->write_capacity_units > TABLE_CAPACITY_MAX)
        return kura_err(KURA_E_INVALID, "Given value %" PRIu64
                        " for WriteCapacityUnits is out of bounds", r->write_capacity_units);
    return KURA_OK;
}

/* Appends "[a, b]" of the names got by name(i) to `out` (cut short at `cap`). */
#define NAME_LIST(out, cap, n, name)                                                           \
    do {                                                                                       \
        size_t off_ = (size_t)snprintf(out, cap, "[");                                         \
        for (size_t i = 0; i < (n) && off_ < (cap); i++)                                       \
            off_ += (size_t)snprintf(out + off_, (cap)-off_, "%s%s", i ? ", " : "",            \
                                     (name) ? (name) : "null");                                \
        if (off_ < (cap))                                                                      \
            snprintf(out + off_, (cap)-off_, "]");                                             \
    } while (0)

void table_list_keys(char *out, size_t cap, const kura_key_schema_element *k, size_t n)
{
    NAME_LIST(out, cap, n, k[i].attribute_name);
}

void table_list_defs(char *out, size_t cap, const kura_attribute_definition *d, size_t n)
{
    NAME_LIST(out, cap, n, d[i].attribute_name);
}

/* A name's length as DynamoDB's model constraints count it: in UTF-16 code units. */
static size_t utf16_len(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xC0) != 0x80 ? (*p >= 0xF0 ? 2 : 1) : 0;
    return n;
}

/* Appends "Value '<name>' at '<param>.<i>.member.attributeName' failed to satisfy constraint:
 * Member must have length ..." to `msg` for a name outside 1..255, counting in *count. */
static void name_length_error(kbuf *msg, const char *name, const char *param, size_t i,
                              size_t *count)
{
    size_t n = utf16_len(name);
    if (n >= 1 && n <= ATTR_NAME_MAX)
        return;
    char head[96];
    snprintf(head, sizeof head, "%sValue '", *count ? "; " : "");
    char tail[160];
    snprintf(tail, sizeof tail,
             "' at '%s.%zu.member.attributeName' failed to satisfy constraint: Member must "
             "have length %s than or equal to %d",
             param, i + 1, n ? "less" : "greater", n ? ATTR_NAME_MAX : 1);
    kbuf_append(msg, head, strlen(head));
    kbuf_append(msg, name, strlen(name));
    kbuf_append(msg, tail, strlen(tail));
    (*count)++;
}

kura_status table_check_name_lengths(const kura_attribute_definition *d, size_t nd,
                                     const kura_key_schema_element *k, size_t nk)
{
    kbuf msg = KBUF_INIT;
    size_t count = 0;
    for (size_t i = 0; i < nd; i++)
        if (d[i].attribute_name)
            name_length_error(&msg, d[i].attribute_name, "attributeDefinitions", i, &count);
    for (size_t i = 0; i < nk; i++)
        if (k[i].attribute_name)
            name_length_error(&msg, k[i].attribute_name, "keySchema", i, &count);
    kura_status s = KURA_OK;
    if (count)
        s = kura_err(KURA_E_INVALID, "%zu validation error%s detected: %.*s", count,
                     count > 1 ? "s" : "", (int)msg.len, msg.data ? (char *)msg.data : "");
    kbuf_free(&msg);
    return s;
}

kura_status table_check_schema(const kura_create_table_req *r)
{
    size_t nk = r->key_schema_count, nd = r->attribute_definitions_count;
    if (nk < 1 || nk > 2 || !r->key_schema)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%s' at 'keySchema' failed to "
                        "satisfy constraint: Member must have length %s than or equal to %s",
                        nk ? "[...]" : "[]", nk ? "less" : "greater", nk ? "2" : "1");
    if (nd < 1 || !r->attribute_definitions)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value null at 'attributeDefinitions' "
                        "failed to satisfy constraint: Member must not be null");
    const kura_key_schema_element *ks = r->key_schema;
    const kura_attribute_definition *ad = r->attribute_definitions;
    kura_status ls = table_check_name_lengths(r->attribute_definitions, nd, ks, nk);
    if (ls != KURA_OK)
        return ls;
    for (size_t i = 0; i < nk; i++) {
        const char *k = ks[i].attribute_name;
        if (!k)
            return kura_err(KURA_E_INVALID,
                            "1 validation error detected: Value null at "
                            "'keySchema.%zu.member.attributeName' failed to satisfy "
                            "constraint: Member must not be null",
                            i + 1);
    }
    for (size_t i = 0; i < nd; i++) {
        const char *d = ad[i].attribute_name;
        kura_type ty = ad[i].attribute_type;
        if (!d)
            return kura_err(KURA_E_INVALID,
                            "1 validation error detected: Value null at "
                            "'attributeDefinitions.%zu.member.attributeName' failed to satisfy "
                            "constraint: Member must not be null",
                            i + 1);
        if (ty != KURA_S && ty != KURA_N && ty != KURA_B)
            return kura_err(KURA_E_INVALID,
                            "1 validation error detected: Value '%s' at "
                            "'attributeDefinitions.%zu.member.attributeType' failed to satisfy "
                            "constraint: Member must satisfy enum value set: [B, N, S]",
                            val_type_name(ty), i + 1);
        /* quadratic, so only over as many definitions as a valid table can have; more fail
         * below anyway (some are not key attributes) */
        for (size_t j = 0; j < i && nd <= TABLE_MAX_ATTR_DEFS; j++)
            if (!strcmp(d, ad[j].attribute_name))
                return kura_err(KURA_E_INVALID, "Cannot have two attributes with the same name");
    }
    if (nk > nd)
        return kura_err(KURA_E_INVALID,
                        "Invalid KeySchema: Some index key attribute have no definition");
    for (size_t i = 0; i < nk; i++) {
        bool defined = false;
        for (size_t j = 0; j < nd && !defined; j++)
            defined = !strcmp(ks[i].attribute_name, ad[j].attribute_name);
        if (!defined) {
            char kl[600], dl[1024];
            table_list_keys(kl, sizeof kl, ks, nk);
            table_list_defs(dl, sizeof dl, ad, nd);
            return kura_err(KURA_E_INVALID,
                            "One or more parameter values were invalid: Some index key "
                            "attributes are not defined in AttributeDefinitions. Keys: %s, "
                            "AttributeDefinitions: %s",
                            kl, dl);
        }
    }
    if (nk == 2 && !strcmp(ks[0].attribute_name, ks[1].attribute_name))
        return kura_err(KURA_E_INVALID, "Both the Hash Key and the Range Key element in the "
                                        "KeySchema have the same name");
    if (ks[0].range)
        return kura_err(KURA_E_INVALID,
                        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
    if (nk == 2 && !ks[1].range)
        return kura_err(KURA_E_INVALID,
                        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
    /* With indexes, table_check_indexes checks that every definition is a key attribute of
     * the table or of an index (DynamoDB's order: this check is skipped then). */
    if (!r->local_secondary_indexes && !r->global_secondary_indexes && nk != nd)
        return kura_err(KURA_E_INVALID,
                        "One or more parameter values were invalid: Number of attributes in "
                        "KeySchema does not exactly match number of attributes defined in "
                        "AttributeDefinitions");
    return KURA_OK;
}
