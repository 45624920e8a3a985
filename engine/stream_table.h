/*
 * stream_table.h - a table's change streams (engine/stream_table.c): their definitions, where
 * each shard's records lie in the partitions' WALs, enabling and disabling (engine/ only).
 *
 * A stream is named by its creation time (its label, stream_label) and has one shard per
 * partition of its table. Its shard p is the records of partition p's WAL from start[p] on,
 * and, once the stream is disabled, before end[p]: the WAL positions the partition's writer
 * was at when the stream was enabled and disabled, taken while every item lock of the table
 * was held, so that every write between them carries the old image and the meta entry
 * (table_needs_images) and none outside them is taken for the stream's.
 *
 * The table keeps its enabled stream and the disabled ones still within the retention
 * (kura_options.stream_retention_ms), oldest first, in its definition record
 * (docs/format/catalog.md, version 4); the last one, however old, names LatestStreamArn.
 * The table's tree has the TREE_STREAM flag from its first stream on: its partitions keep
 * their WAL segments for the retention (lsm_set_wal_retain_ms).
 */
#ifndef KURA_ENGINE_STREAM_TABLE_H
#define KURA_ENGINE_STREAM_TABLE_H

#include "engine/arn.h"
#include "engine/lsm/lsm.h"
#include "engine/table.h"

typedef struct table_stream {
    uint64_t label_ms;          /* created at (wall ms): names it */
    kura_stream_view_type view;
    uint64_t closed_ms;         /* disabled at (wall ms); 0 while enabled */
    lsm_wal_pos *start;         /* per partition: where its shard begins */
    lsm_wal_pos *end;           /* per partition, once disabled: where its shard ends */
} table_stream;

/* kura_options.stream_retention_ms, or its default (24 hours). */
uint64_t stream_retention_ms(const kura_db *db);

/* CreateTable's and UpdateTable's checks of a StreamSpecification that is given. */
kura_status stream_spec_check(const kura_stream_specification *sp);

/* CreateTable: the new table's stream (its tree open, nothing written yet). KURA_E_NOMEM. */
kura_status table_stream_create(kura_db *db, kura_table *t, kura_stream_view_type view);
/* UpdateTable's StreamSpecification (checked): enables a new stream or disables the enabled
 * one, and writes the definition. "Table already has an enabled stream", "Table has no
 * stream to disable" (KURA_E_INVALID); storage errors leave the table as it was. */
kura_status table_stream_update(kura_db *db, kura_table *t,
                                const kura_stream_specification *sp);
/* The table's StreamSpecification and LatestStream* into `d` (its table_arn set: the
 * stream's ARN is that + "/stream/" + label). tables_mu held. False: out of memory. */
bool table_stream_describe(const kura_table *t, kura_table_description *d);

/* The stream of `t` labelled label_ms still readable at `now` (tables_mu held), or NULL. */
const table_stream *table_stream_find(kura_db *db, const kura_table *t, uint64_t label_ms,
                                      uint64_t now);
/* The table name and label of a stream ARN (arn_stream's); false if `arn` is not one, or is
 * one of another region or account than sc's. */
bool stream_arn_parse(const arn_scope *sc, const char *arn, char *table, size_t cap,
                      uint64_t *label_ms_out);
/* Whether `arn` has a stream ARN's shape, arn:<partition>:dynamodb:<region>:<12 digits>:
 * table/<table name>/stream/<label>, whatever its region and account: DynamoDB Streams
 * answers one that has not with a ValidationException ("Invalid StreamArn"), one that has
 * but names no stream of this database with ResourceNotFoundException. */
bool stream_arn_wellformed(const char *arn);

/* Frees the streams of `t` (table_free). */
void table_streams_free(kura_table *t);

#endif
