/*
 * capacity.c - This file contains DynamoDB's capacity-unit arithmetic (ReturnConsumedCapacity).
 *
 * The rules (DynamoDB Developer Guide, "Read/write capacity mode"; the same in dynalite's
 * db/index.js capacityUnits and in DynamoDB Local 1.25.1):
 *  - a read of one item costs ceil(size / 4 KB) read units, at least 1 (an absent item costs
 *    the minimum); an eventually consistent read costs half (0.5 for a small item);
 *  - a write costs ceil(size / 1 KB) write units, at least 1, where the size is the larger of
 *    the old and the new item (a delete: the old item; absent: 1);
 *  - BatchGetItem and BatchWriteItem charge every item on its own and report the sum per
 *    table; Query and Scan charge the total size read, rounded up once.
 * Sizes are DynamoDB item sizes (val_item_size), not encoded sizes.
 *
 * What the JSON API prints. DynamoDB Local 1.25.1 and dynalite answer exactly (checked with
 * PutItem, GetItem, DeleteItem, UpdateItem, BatchGetItem, BatchWriteItem):
 *   TOTAL     "ConsumedCapacity": {"TableName": "T", "CapacityUnits": 1.0}
 *   INDEXES   "ConsumedCapacity": {"TableName": "T", "CapacityUnits": 1.0,
 *                                  "Table": {"CapacityUnits": 1.0}}
 * (the batch operations: a list of these, one per table). Neither prints ReadCapacityUnits or
 * WriteCapacityUnits for these operations, so the JSON layer prints capacity_units and, with
 * INDEXES, table_capacity_units; read_/write_capacity_units are filled for C callers that
 * want the split (TransactWriteItems-style responses).
 *
 * Secondary indexes (capacity_add_index). A Query or Scan with IndexName charges the index
 * entries it read to the index and what it read from the table (an LSI's whole items) to the
 * table; with INDEXES DynamoDB Local 1.25.1 answers, for an LSI Query of one small item with
 * Select ALL_ATTRIBUTES,
 *   {"TableName": "T", "CapacityUnits": 1.0, "Table": {"CapacityUnits": 0.5},
 *    "LocalSecondaryIndexes": {"lsi": {"CapacityUnits": 0.5}}}
 * and for a GSI ("GlobalSecondaryIndexes") the table's share 0.0. The index list is built so
 * that a write can name every index it changed.
 */
#include "engine/page.h"

#include <stdlib.h>
#include <string.h>

#include "util/status.h"

double capacity_read_units(uint64_t nbytes, bool consistent)
{
    uint64_t units = (nbytes + 4095) / 4096;
    if (units == 0)
        units = 1;
    return consistent ? (double)units : (double)units / 2.0;
}

double capacity_write_units(uint64_t nbytes)
{
    uint64_t units = (nbytes + 1023) / 1024;
    return units ? (double)units : 1.0;
}

kura_status capacity_fill(kura_consumed_capacity *cc, kura_return_capacity mode,
                          const char *table_name, double units, bool is_read)
{
    memset(cc, 0, sizeof *cc);
    if (mode == KURA_CAPACITY_NONE)
        return KURA_OK;
    if (!(cc->table_name = strdup(table_name)))
        return kura_err(KURA_E_NOMEM, "out of memory");
    cc->present = true;
    cc->capacity_units = units;
    if (is_read)
        cc->read_capacity_units = units;
    else
        cc->write_capacity_units = units;
    if (mode == KURA_CAPACITY_INDEXES)
        cc->table_capacity_units = units;
    return KURA_OK;
}

kura_status capacity_add_index(kura_consumed_capacity *cc, kura_return_capacity mode,
                               const char *name, bool global, double units, bool is_read)
{
    if (!cc->present)
        return KURA_OK;
    cc->capacity_units += units;
    if (is_read)
        cc->read_capacity_units += units;
    else
        cc->write_capacity_units += units;
    if (mode != KURA_CAPACITY_INDEXES)
        return KURA_OK;
    for (size_t i = 0; i < cc->index_count; i++) {
        if (cc->indexes[i].global == global && !strcmp(cc->indexes[i].index_name, name)) {
            cc->indexes[i].capacity_units += units;
            return KURA_OK;
        }
    }
    kura_index_capacity *a = realloc(cc->indexes, (cc->index_count + 1) * sizeof *a);
    if (!a)
        return kura_err(KURA_E_NOMEM, "out of memory");
    cc->indexes = a;
    kura_index_capacity *ic = &a[cc->index_count];
    if (!(ic->index_name = strdup(name)))
        return kura_err(KURA_E_NOMEM, "out of memory");
    ic->global = global;
    ic->capacity_units = units;
    cc->index_count++;
    return KURA_OK;
}

void capacity_free(kura_consumed_capacity *cc)
{
    free(cc->table_name);
    for (size_t i = 0; i < cc->index_count; i++)
        free(cc->indexes[i].index_name);
    free(cc->indexes);
    memset(cc, 0, sizeof *cc);
}
