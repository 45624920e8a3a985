/*
 * schema.h - the two checks DynamoDB runs on every request before looking at its meaning,
 * both walking the operation's input shape in DynamoDB's model (api/model.h, generated from
 * botocore's service-2.json by scripts/gen_model.py; docs/data-model.md "Request validation"):
 *
 *  1. api_check_types: the deserializer's view. Every value must have the JSON type its
 *     member's Java type accepts, else SerializationException ("STRING_VALUE cannot be
 *     converted to Integer", "Unexpected field type", ...). Lists, maps and structures have
 *     their own messages by where they are used: a list that is a map's value, a map that is a
 *     list element or map value are Java's parameterized types; a structure that is a list
 *     element or map value is a "value", one that is a member a "field" (api_type). Members are
 *     visited in model_typed order (DynamoDB's, as dynalite records it), so the first wrong one
 *     is the one reported. It also normalises the request in place as DynamoDB's deserializer
 *     does: unknown members and null members of structures are removed, Boolean members given
 *     as "true"/"1"/"yes" (any case) become JSON booleans, Integer and Long members given as
 *     fractions are floored, and Blob values must be canonical base64. Attribute values are
 *     checked against the table api_attr_fields (its member order decides the first error).
 *  2. api_check_model: the constraints of DynamoDB's service model (not null, pattern, enum,
 *     length, range; validate.c), all violations collected into one ValidationException, at
 *     most 10 of them: "2 validation errors detected: Value null at 'tableName' failed to
 *     satisfy constraint: Member must not be null; Value '0' at 'limit' failed to satisfy
 *     constraint: Member must have value greater than or equal to 1".
 *
 * Both return KURA_E_INVALID with the message through kura_err(); the caller knows from the
 * pass which error type that is. Thread safety: tables are immutable; the checks keep no
 * state.
 */
#ifndef KURA_API_SCHEMA_H
#define KURA_API_SCHEMA_H

#include "api/jdoc.h"
#include <stdint.h>

#include "kura.h"

/* The constraint message of a table or index name's pattern (validate.c). */
#define API_MSG_NAME_PATTERN "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"

/* The Java types of the deserializer; each has its own messages. */
typedef enum api_type {
    AT_STRING,
    AT_BOOLEAN,
    AT_INTEGER,
    AT_LONG,
    AT_BLOB,    /* base64 string */
    AT_LIST,    /* JSON array of `elem` */
    AT_PLIST,   /* a parameterized list (a map's value: BatchWriteItem's table lists) */
    AT_MAP,     /* JSON object of `elem`; `subtype` names the value type in messages */
    AT_PMAP,    /* a parameterized map (a list element or map value: BatchGetItem's keys) */
    AT_VSTRUCT, /* a structure used as a value (a list element, a map value) */
    AT_FSTRUCT, /* a structure used as a member of another structure */
} api_type;

/* A member of the attribute value table below (requests themselves are walked against the
 * generated model). */
typedef struct api_field {
    const char *name; /* the member name; NULL ends a field list */
    api_type type;
    const char *subtype;            /* MAP/VSTRUCT/FSTRUCT: Java type name for messages */
    const struct api_field *elem;   /* LIST/MAP: the element type */
    const struct api_field *fields; /* VSTRUCT/FSTRUCT: the members */
} api_field;

/* The attribute value structure AttrStruct<ValueStruct> (an item's attribute, a list
 * element, a key attribute) and AttrStruct<FieldStruct> (a field such as Expected.Value). */
extern const api_field api_attr_value;
extern const api_field api_attr_fields[]; /* the members S, B, N, BOOL, NULL, BS, NS, SS, L, M */
extern const api_field api_attr_field;
/* Map<AttributeValue> of api_attr_value: an item, a key, ExpressionAttributeValues. */
extern const api_field api_attr_map;

/* Pass 1 over request object `req` of `operation` (SerializationException messages), walked
 * against the operation's input shape in DynamoDB's model (api/model.h, generated) with kura's
 * extension members. KURA_E_NOT_SUPPORTED for an operation the model does not have. */
kura_status api_check_types(jd_t *req, const char *operation);
/* Pass 1 for one value slot: *slot is checked against `f` and may be replaced (the old value
 * is released). Used for single attribute values by kura_value_from_json. */
kura_status api_check_value(jd_t **slot, const api_field *f);
/* Pass 2 (ValidationException messages), after pass 1 succeeded: the request walked against
 * DynamoDB's model of `operation` (api/model.h, generated; validate.c), then the semantic
 * table-name check. KURA_OK for an operation the model does not have. */
kura_status api_check_model(const char *operation, const jd_t *req);

/* Length as Java and JavaScript count it: UTF-16 code units of the UTF-8 text s[0..n). */
size_t api_utf16_len(const char *s, size_t n);

/* The rendering of a value in an attribute value's messages (json_value.c): strings as they
 * are, lists as "[a, b]", objects as compact JSON. Returns a malloc'ed string or NULL when out
 * of memory. */
char *api_value_str(const jd_t *v);

#endif
