/*
 * schema.h - declarative descriptions of DynamoDB request parameters and the two checks
 * DynamoDB runs on every request before looking at its meaning.
 *
 * Each operation describes its parameters with a table of api_field (req_*.c), in the order
 * DynamoDB checks them (the order of dynalite's validations/<Op>.js, which copies DynamoDB's
 * messages). Two passes use the table:
 *
 *  1. api_check_types: the deserializer's view. Every value must have the JSON type its
 *     parameter's Java type accepts, else SerializationException ("STRING_VALUE cannot be
 *     converted to Integer", "Unexpected field type", ...). It also normalises the request in
 *     place as DynamoDB's deserializer does: unknown members and null members of structures
 *     are removed, Boolean parameters given as "true"/"1"/"yes" (any case) become JSON
 *     booleans, Integer and Long parameters given as fractions are floored, and Blob values
 *     must be canonical base64.
 *  2. api_check_model: the constraints of DynamoDB's service model (not null, pattern, enum,
 *     length, range), generated from botocore's model into api/model_gen.c rather than taken
 *     from these tables (validate.c), all violations collected into one ValidationException,
 *     at most 10 of them: "2 validation errors detected: Value null at 'tableName' failed to
 *     satisfy constraint: Member must not be null; Value '0' at 'limit' failed to satisfy
 *     constraint: Member must have value greater than or equal to 1". The AF_* constraint
 *     flags and lengths below are no longer read by it (the tables still drive pass 1).
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

/* The constraint message of AF_NAME. */
#define API_MSG_NAME_PATTERN "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"

/* The Java types of DynamoDB's request model; each has its own deserialization messages. */
typedef enum api_type {
    AT_STRING,
    AT_BOOLEAN,
    AT_INTEGER,
    AT_LONG,
    AT_BLOB,    /* base64 string (inside attribute values only) */
    AT_LIST,    /* JSON array of `elem` */
    AT_PLIST,   /* a parameterized list (BatchWriteItem's table lists) */
    AT_MAP,     /* JSON object of `elem`; `subtype` names the value type in messages */
    AT_PMAP,    /* a parameterized map (BatchGetItem's keys) */
    AT_VSTRUCT, /* a structure used as a value (a list element, a map value) */
    AT_FSTRUCT, /* a structure used as a field of another structure */
} api_type;

/* The constraint flags below were pass 2's; the model-driven check (validate.c) does not read
 * them; they are kept so that branches editing the tables merge. */
enum {
    AF_NOT_NULL = 1u << 0,   /* "Member must not be null" */
    AF_NAME = 1u << 1,       /* pattern [a-zA-Z0-9_.-]+ (table and index names) */
    AF_MIN = 1u << 2,        /* value >= min */
    AF_MAX = 1u << 3,        /* value <= max */
    AF_KEYS_NAME = 1u << 4,  /* map keys are table names (3..255 of the name pattern) */
    AF_REQUIRED = 1u << 5,   /* top level: "The parameter 'X' is required but was not ..." */
    AF_TABLE_NAME = 1u << 6, /* top level: "X must be at least 3 characters long and ..." */
    AF_ATTR = 1u << 7,       /* an attribute value: no constraints are checked below it */
    AF_TABLE_ARN = 1u << 8,  /* a table name (or, with AF_KEYS_NAME, map keys that are) may
                              * also be a table's ARN (engine/arn.h, up to 1024 long): one
                              * whose table part is a valid name passes the name checks;
                              * anything else is checked as a name (api_table_name resolves) */
};

typedef struct api_field {
    const char *name; /* the member name; NULL ends a field list */
    api_type type;
    uint32_t flags;                          /* AF_* */
    const char *subtype;                     /* MAP/VSTRUCT/FSTRUCT: Java type name for messages */
    const struct api_field *elem;            /* LIST/PLIST/MAP/PMAP: the element type */
    const struct api_field *fields;          /* VSTRUCT/FSTRUCT: the members */
    const char *const *enums;                /* allowed strings (NULL-terminated), or NULL */
    uint32_t min_len, max_len;               /* length (strings: UTF-16 units), 0 = unchecked */
    int64_t min, max;                        /* with AF_MIN / AF_MAX */
    uint32_t values_min_len, values_max_len; /* MAP: every value's length, 0 = unchecked */
} api_field;

/* The attribute value structure AttrStruct<ValueStruct> (an item's attribute, a list
 * element, a key attribute) and AttrStruct<FieldStruct> (a field such as Expected.Value). */
extern const api_field api_attr_value;
extern const api_field api_attr_fields[]; /* the members S, B, N, BOOL, NULL, BS, NS, SS, L, M */
extern const api_field api_attr_field;
/* Map<AttributeValue> of api_attr_value: an item, a key, ExpressionAttributeValues. */
extern const api_field api_attr_map;

/* Pass 1 over request object `req` of `operation`, walked against the operation's input shape
 * in DynamoDB's model (api/model.h, generated), with kura's extension members (SerializationException
 * messages). KURA_E_NOT_SUPPORTED for an operation the model does not have. */
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
