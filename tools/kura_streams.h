/*
 * kura_streams.h - `kura streams list|read` (tools/kura_streams.c): the change streams of a
 * database directory and their records as JSON lines.
 */
#ifndef KURA_TOOLS_KURA_STREAMS_H
#define KURA_TOOLS_KURA_STREAMS_H

#include <stdbool.h>

#include "kura.h"

/* The command line after "streams"; the strings are borrowed from argv. */
typedef struct kura_streams_args {
    bool read;          /* read (else list) */
    const char *table;  /* list: TABLE, NULL for every table */
    const char *stream; /* read: TABLE or STREAM_ARN */
    const char *shard;  /* read --shard, NULL for every shard */
    const char *after;  /* read --after (needs --shard), NULL for the oldest record kept */
} kura_streams_args;

/* 0, or -1 for a usage error (nothing printed). Run before the database is opened. */
int kura_streams_parse(int argc, char **argv, kura_streams_args *out);
/* Runs the command; returns the exit status (kura_streams.c). */
int kura_streams_run(kura_db *db, const kura_streams_args *a);

#endif
