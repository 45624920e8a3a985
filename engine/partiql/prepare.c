/*
 * prepare.c - This file contains the preparation of a PartiQL statement for running: the
 * parse, the key schema of its table (or of the index a SELECT names) from the catalog, and
 * the translation into a plan (translate.c). A table that does not exist is DynamoDB's
 * ResourceNotFoundException "Requested resource not found", whatever the statement.
 */
#include <string.h>

#include "engine/partiql/partiql.h"
#include "util/status.h"

static void keys_of(const kura_key_schema_element *ks, size_t n, pq_keys *out)
{
    for (size_t i = 0; i < n; i++) {
        if (ks[i].range) out->range = ks[i].attribute_name;
        else out->hash = ks[i].attribute_name;
    }
}

/* The index `name` among n descriptions, or NULL. */
static const kura_index_description *find_index(const kura_index_description *d, size_t n,
                                                const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].index_name, name) == 0) return &d[i];
    return NULL;
}

kura_status pq_prepare(kura_db *db, const char *text, const kura_value *params, pq_prepared *out)
{
    memset(out, 0, sizeof *out);
    kura_status s = pq_parse(text, strlen(text), params, &out->stmt);
    if (s != KURA_OK) return s;
    kura_table_description d;
    s = kura_describe_table(db, out->stmt->table, &d);
    if (s == KURA_E_RESOURCE_NOT_FOUND)
        return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found");
    if (s != KURA_OK) return s;
    pq_keys k = {NULL, NULL};
    keys_of(d.key_schema, d.key_schema_count, &k);
    const char *index = out->stmt->index;
    if (index) {
        const kura_index_description *ix =
            find_index(d.global_secondary_indexes, d.global_secondary_indexes_count, index);
        if (!ix) ix = find_index(d.local_secondary_indexes, d.local_secondary_indexes_count, index);
        if (!ix) {
            kura_table_description_free(&d);
            return kura_err(KURA_E_INVALID, "The table does not have the specified index: %s",
                            index);
        }
        k = (pq_keys){NULL, NULL};
        keys_of(ix->key_schema, ix->key_schema_count, &k);
    }
    s = pq_translate(out->stmt, &k, &out->plan);
    kura_table_description_free(&d);
    return s;
}

void pq_prepared_free(pq_prepared *p)
{
    pq_plan_free(&p->plan);
    pq_stmt_free(p->stmt);
    p->stmt = NULL;
}
