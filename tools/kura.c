/*
 * kura.c - This file contains the `kura` command: DynamoDB operations on a database
 * directory through the JSON API (kura_execute), for scripts, the scenario vectors and the
 * differential test.
 *
 *   kura --data DIR [--partitions N] [--relaxed] exec OPERATION
 *       Reads one request body (DynamoDB JSON) from stdin, writes the response body and a
 *       newline to stdout. Exit status 0 on success, 1 on a DynamoDB error (the error body
 *       {"__type": ..., "message": ...} is on stdout), 2 on a usage error (message on
 *       stderr), 3 when the database cannot be opened or closed cleanly.
 *
 *   kura --data DIR [--partitions N] [--relaxed] pipe
 *       Reads lines "<Operation> <json>" from stdin and answers each with one line
 *       "<0|1> <response json>" (0: success, 1: DynamoDB error), flushed at once, so one
 *       process can run thousands of operations. The database is opened once.
 *
 * --partitions sets the hash partitions of tables created without KuraPartitions;
 * --relaxed syncs the WAL periodically instead of on every write (KURA_RELAXED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kura.h"

#define EXIT_USAGE 2
#define EXIT_DB 3

static void usage(void)
{
    fprintf(stderr, "usage: kura --data DIR [--partitions N] [--relaxed] exec OPERATION\n"
                    "       kura --data DIR [--partitions N] [--relaxed] pipe\n");
    exit(EXIT_USAGE);
}

/* Reads all of stdin into a malloc'ed buffer. */
static char *read_stdin(size_t *len_out)
{
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += n;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    if (!buf || ferror(stdin)) {
        fprintf(stderr, "kura: cannot read the request from stdin\n");
        exit(EXIT_USAGE);
    }
    *len_out = len;
    return buf;
}

/* Runs one request; returns 0 (success), 1 (DynamoDB error) or -1 (out of memory). */
static int run_one(kura_db *db, const char *op, const char *body, size_t len, char **out)
{
    size_t out_len;
    kura_status s = kura_execute(db, op, body, len, out, &out_len);
    if (s == KURA_E_NOMEM && !kura_execute_error_type()) return -1;
    return s == KURA_OK ? 0 : 1;
}

static int cmd_exec(kura_db *db, const char *op)
{
    size_t len;
    char *body = read_stdin(&len), *out = NULL;
    int rc = run_one(db, op, body, len, &out);
    free(body);
    if (rc < 0) {
        fprintf(stderr, "kura: out of memory\n");
        return EXIT_DB;
    }
    printf("%s\n", out);
    kura_free(out);
    return rc;
}

static int cmd_pipe(kura_db *db)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0) continue;
        char *sp = strchr(line, ' ');
        const char *body = sp ? sp + 1 : "";
        if (sp) *sp = '\0';
        char *out = NULL;
        int rc = run_one(db, line, body, strlen(body), &out);
        if (rc < 0) {
            fprintf(stderr, "kura: out of memory\n");
            free(line);
            return EXIT_DB;
        }
        printf("%d %s\n", rc, out);
        fflush(stdout);
        kura_free(out);
    }
    free(line);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    kura_options opts;
    kura_options_init(&opts);
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--partitions") == 0 && i + 1 < argc) {
            char *end;
            long p = strtol(argv[++i], &end, 10);
            if (*end || p < 1 || p > 256) {
                fprintf(stderr, "kura: --partitions takes 1..256\n");
                return EXIT_USAGE;
            }
            opts.default_partitions = (uint32_t)p;
        } else if (strcmp(argv[i], "--relaxed") == 0) {
            opts.durability = KURA_RELAXED;
        } else {
            usage();
        }
    }
    bool exec = i + 2 == argc && strcmp(argv[i], "exec") == 0;
    bool pipe = i + 1 == argc && strcmp(argv[i], "pipe") == 0;
    if (!dir || (!exec && !pipe)) usage();

    kura_db *db;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK) {
        fprintf(stderr, "kura: cannot open %s: %s: %s\n", dir, kura_status_str(s),
                kura_last_error());
        return EXIT_DB;
    }
    int rc = exec ? cmd_exec(db, argv[i + 1]) : cmd_pipe(db);
    fflush(stdout);
    s = kura_close(db);
    if (s != KURA_OK) {
        fprintf(stderr, "kura: closing %s: %s: %s\n", dir, kura_status_str(s), kura_last_error());
        return EXIT_DB;
    }
    return rc;
}
