/*
 * table_int.h - what table.c and table_ddl.c share: the table list and the table struct's
 * construction (engine/ only).
 */
#ifndef KURA_ENGINE_TABLE_INT_H
#define KURA_ENGINE_TABLE_INT_H

#include "engine/table.h"

/* The table called `name`, or NULL. tables_mu held. */
kura_table *table_find_locked(kura_db *db, const char *name);
/* A zeroed table with its locks initialised, or NULL; table_free frees it (and NULL). */
kura_table *table_new(void);
void table_free(kura_table *t);
kura_status table_list_add_locked(kura_db *db, kura_table *t);
void table_list_remove_locked(kura_db *db, kura_table *t);

/* table_def.c: the definition record of `t` appended to `b`, and its decoding into a
 * table_new() table (name, id, settings, attribute definitions, key names). */
kura_status def_encode(const kura_table *t, kbuf *b);
kura_status def_decode(const uint8_t *p, size_t len, kura_table *t);

/* DynamoDB's checks of a table name parameter (`param` is its name in messages, e.g.
 * "tableName"): not null, 3..255 bytes of [a-zA-Z0-9_.-]. KURA_E_INVALID. */
kura_status table_name_check(const char *name, const char *param);
/* table_check.c: CreateTable's key schema / attribute definitions and billing checks. */
kura_status table_check_schema(const kura_create_table_req *r);
kura_status table_check_billing(const kura_create_table_req *r);
/* The largest ReadCapacityUnits / WriteCapacityUnits DynamoDB accepts. */
extern const uint64_t TABLE_CAPACITY_MAX;

#endif
