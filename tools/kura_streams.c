/*
 * kura_streams.c - This file contains `kura streams`, the change streams of a database
 * directory for embedded users and operators: the streams there are, and their records as
 * JSON lines, through the C API (kura.h, "Change streams") and the JSON API's writers, so a
 * line is exactly a GetRecords record.
 *
 *   kura --data DIR streams list [TABLE]
 *       One line {"StreamArn","TableName","StreamLabel"} per stream of TABLE (of every table
 *       without one), enabled or disabled and still readable, every page of ListStreams.
 *
 *   kura --data DIR streams read TABLE|STREAM_ARN [--shard SHARD_ID [--after SEQUENCE_NUMBER]]
 *       One line per record kept (GetRecords' {"eventID", ..., "dynamodb": {...}}) of the
 *       stream (a TABLE's: its latest stream), shard by shard, each in its order, from the
 *       oldest record kept; --shard reads that shard only, --after only its records after
 *       SEQUENCE_NUMBER, so a consumer that kept the last line's SequenceNumber goes on from
 *       there.
 *
 * Reading from LATEST is left out on purpose: the command holds the database alone (no server
 * can write to it meanwhile), so there would never be anything after it.
 *
 * Exit status: 0; 1 for an error of the request (no such table or stream, a table without a
 * stream, an invalid shard or sequence number, trimmed records), its message on stderr; 3 for
 * a storage error (kura.c: 2 for usage, 3 when the database cannot be opened).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "tools/kura_streams.h"

#define EXIT_REQUEST 1
#define EXIT_STORAGE 3

/* The exit status of a failed call, its message on stderr. */
static int fail(const char *what, kura_status s)
{
    fprintf(stderr, "kura: streams %s: %s: %s\n", what, kura_status_str(s), kura_last_error());
    bool request = s == KURA_E_INVALID || s == KURA_E_RESOURCE_NOT_FOUND ||
                   s == KURA_E_EXPIRED_ITERATOR || s == KURA_E_TRIMMED_DATA;
    return request ? EXIT_REQUEST : EXIT_STORAGE;
}

static int nomem(void)
{
    fprintf(stderr, "kura: out of memory\n");
    return EXIT_STORAGE;
}

/* Prints b as one line and empties it. */
static void print_line(kbuf *b)
{
    fwrite(b->data, 1, b->len, stdout);
    putchar('\n');
    kbuf_clear(b);
}

int kura_streams_parse(int argc, char **argv, kura_streams_args *out)
{
    memset(out, 0, sizeof *out);
    if (argc == 2 && strcmp(argv[0], "list") == 0) {
        out->table = argv[1];
        return 0;
    }
    if (argc == 1 && strcmp(argv[0], "list") == 0) return 0;
    if (argc < 2 || strcmp(argv[0], "read") != 0) return -1;
    out->read = true;
    out->stream = argv[1];
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 == argc) return -1;
        if (strcmp(argv[i], "--shard") == 0)
            out->shard = argv[i + 1];
        else if (strcmp(argv[i], "--after") == 0)
            out->after = argv[i + 1];
        else
            return -1;
    }
    return out->after && !out->shard ? -1 : 0;
}

static int cmd_list(kura_db *db, const char *table)
{
    char *start = NULL;
    kbuf b = KBUF_INIT;
    int rc = 0;
    do {
        kura_stream_summary *st;
        size_t n;
        char *last;
        kura_status s = kura_list_streams(db, table, start, 0, &st, &n, &last);
        if (s != KURA_OK) {
            rc = fail("list", s);
            break;
        }
        for (size_t i = 0; i < n && rc == 0; i++)
            if (api_write_stream_summary(&b, &st[i]) == KURA_OK)
                print_line(&b);
            else
                rc = nomem();
        kura_stream_summaries_free(st, n);
        kura_free(start);
        start = last;
    } while (start && rc == 0);
    kura_free(start);
    kbuf_free(&b);
    return rc;
}

/* Prints the records of one shard, from the oldest kept or after `after`, to its end. */
static int read_shard(kura_db *db, const char *arn, const char *shard, const char *after)
{
    char *it = NULL;
    kura_status s = kura_get_shard_iterator(
        db, arn, shard, after ? KURA_ITER_AFTER_SEQUENCE_NUMBER : KURA_ITER_TRIM_HORIZON, after,
        &it);
    if (s != KURA_OK) return fail("read", s);
    kbuf b = KBUF_INIT;
    int rc = 0;
    while (it && rc == 0) {
        kura_stream_record *r;
        size_t n;
        char *next;
        if ((s = kura_get_records(db, it, 0, &r, &n, &next)) != KURA_OK) {
            rc = fail("read", s);
            break;
        }
        for (size_t i = 0; i < n && rc == 0; i++)
            if (api_write_stream_record(&b, &r[i], arn_scope_of(db, NULL, NULL).region) ==
                KURA_OK)
                print_line(&b);
            else
                rc = nomem();
        kura_stream_records_free(r, n);
        kura_free(it);
        it = next;
        if (n == 0) break; /* an open shard read to its end (a closed one: next is NULL) */
    }
    kura_free(it);
    kbuf_free(&b);
    return rc;
}

/* The stream to read: STREAM_ARN as it is, a TABLE's latest stream. *arn_out: malloc'ed. */
static int resolve(kura_db *db, const char *name, char **arn_out)
{
    if (strncmp(name, "arn:", 4) == 0) {
        *arn_out = strdup(name);
        return *arn_out ? 0 : nomem();
    }
    kura_table_description d;
    kura_status s = kura_describe_table(db, name, &d);
    if (s != KURA_OK) return fail("read", s);
    *arn_out = d.latest_stream_arn ? strdup(d.latest_stream_arn) : NULL;
    bool had = d.latest_stream_arn != NULL;
    kura_table_description_free(&d);
    if (!had) {
        fprintf(stderr, "kura: streams read: table %s has no stream\n", name);
        return EXIT_REQUEST;
    }
    return *arn_out ? 0 : nomem();
}

static int cmd_read(kura_db *db, const kura_streams_args *a)
{
    char *arn = NULL;
    int rc = resolve(db, a->stream, &arn);
    if (rc != 0) return rc;
    if (a->shard) {
        rc = read_shard(db, arn, a->shard, a->after);
        free(arn);
        return rc;
    }
    char *start = NULL;
    do {
        kura_stream_description d;
        kura_status s = kura_describe_stream(db, arn, 0, start, &d);
        kura_free(start);
        start = NULL;
        if (s != KURA_OK) {
            rc = fail("read", s);
            break;
        }
        for (size_t i = 0; i < d.shards_count && rc == 0; i++)
            rc = read_shard(db, arn, d.shards[i].shard_id, NULL);
        if (rc == 0 && d.last_evaluated_shard_id && !(start = strdup(d.last_evaluated_shard_id)))
            rc = nomem();
        kura_stream_description_free(&d);
    } while (start && rc == 0);
    free(start);
    free(arn);
    return rc;
}

int kura_streams_run(kura_db *db, const kura_streams_args *a)
{
    return a->read ? cmd_read(db, a) : cmd_list(db, a->table);
}
