/*
 * model.h - DynamoDB's request model as C tables: every operation's input shape tree as
 * DynamoDB's service model describes it (botocore's service-2.json of dynamodb and
 * dynamodbstreams), generated into api/model_gen.c by scripts/gen_model.py. api/validate.c
 * walks a request against them (docs/data-model.md, "Request validation").
 *
 * Shapes are shared by reference: model_shapes is indexed by shape id, and a structure's
 * members, a list's element and a map's key and value point at shape ids. Only the shapes
 * reachable from some operation's input are in the table, and the shapes of kura's own request
 * members (KuraPartitions: gen_model.py KURA_EXTENSIONS), which only pass 1 reaches, through
 * model_typed. A structure shape's name is the Java class name DynamoDB's deserializer
 * messages print. The tables are immutable.
 */
#ifndef KURA_API_MODEL_H
#define KURA_API_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum model_type {
    MT_STRING,
    MT_BOOLEAN,
    MT_INTEGER,
    MT_LONG,
    MT_BLOB,
    MT_LIST,
    MT_MAP,
    MT_STRUCT,
    MT_TIMESTAMP,
    MT_DOUBLE,
} model_type;

enum {
    MS_MIN = 1u << 0,        /* `min` is a constraint (length, or value for numbers) */
    MS_MAX = 1u << 1,        /* `max` likewise */
    MS_CHECKED = 1u << 2,    /* the shape or something below it has a constraint: walk it */
    MS_TABLE_NAME = 1u << 3, /* a table name or ARN (TableArn): the semantic name check */
};

enum {
    MM_REQUIRED = 1u << 0, /* "Member must not be null" when absent or null */
    MM_CHECKED = 1u << 1,  /* the member's shape has MS_CHECKED */
};

typedef struct model_shape {
    const char *name;                /* the model's shape name (a structure's Java class name) */
    uint8_t type;                    /* model_type */
    uint8_t flags;                   /* MS_* */
    uint16_t pattern;                /* index into model_patterns / model_pattern_eres; 0: none */
    uint16_t enum_first, enum_count; /* the allowed values: model_enums[first..first+count) */
    uint16_t a;       /* structure: first member in model_members; list: element shape;
                       * map: key shape */
    uint16_t b;       /* structure: member count (at most 64); map: value shape */
    uint16_t c, d;    /* structure: its members that are required or have checks below them,
                       * model_walked[c..c+d) */
    uint16_t e, f;    /* structure: its members in the order pass 1 (the type check) visits
                       * them, model_typed[e..e+f), kura's extension members last */
    int64_t min, max; /* with MS_MIN / MS_MAX */
} model_shape;

typedef struct model_member {
    const char *name; /* as in the model: "TableName" (DynamoDB prints "tableName") */
    uint8_t name_len;
    uint16_t shape;
    uint8_t flags; /* MM_* */
} model_member;

typedef struct model_op {
    const char *name;
    uint16_t input; /* the input structure's shape id */
} model_op;

/* "botocore 1.43.11: dynamodb 2012-08-10 sha256:..., ..." (what scripts/gen_model.py read). */
extern const char *const model_source;
/* Patterns as the model writes them (for messages) and as anchored POSIX extended regular
 * expressions over UTF-8 bytes (for regcomp); index 0 is unused. */
extern const char *const model_patterns[];
extern const char *const model_pattern_eres[];
extern const unsigned model_pattern_count;
extern const char *const model_enums[];
extern const model_member model_members[];
extern const uint16_t model_walked[]; /* indexes into model_members */
extern const uint16_t model_typed[];  /* indexes into model_members */
extern const model_shape model_shapes[];
extern const unsigned model_shape_count;
/* The shape id of AttributeValue (pass 1 checks attribute values with its own table). */
extern const uint16_t model_attribute_value;
extern const model_op model_ops[]; /* sorted by name */
extern const unsigned model_op_count;

/* The operation named `name` of either service, or NULL. */
const model_op *model_find_op(const char *name);

#endif
