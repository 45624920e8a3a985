/*
 * kura_sql.c - This file contains `kura --data DIR sql ["STATEMENT"]`: DynamoDB's PartiQL on
 * a database directory through kura_execute_statement (include/kura.h, docs/partiql.md).
 *
 * Each statement's result items are printed as JSON lines, one item per line in DynamoDB
 * JSON ({"pk":{"S":"a"},...}); a SELECT that pages (the 1 MB rule) is followed through its
 * NextToken to the end. A write prints nothing, or the item RETURNING asked for. A failure
 * prints "<ErrorType>: <message>" on stderr (the DynamoDB error type, as kura-server would
 * answer it) and the run goes on with the next statement; the exit status is then 1.
 *
 * Without a statement argument the statements come from stdin: a line is a statement, and
 * ';' separates several on one line (a ';' or a newline inside a 'string' or a "name" is
 * part of it), so both a file of statements and an interactive session work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/kura_sql.h"

static const char *error_type(kura_status s)
{
    switch (s) {
    case KURA_E_INVALID: return "ValidationException";
    case KURA_E_RESOURCE_NOT_FOUND: return "ResourceNotFoundException";
    case KURA_E_CONDITION_FAILED: return "ConditionalCheckFailedException";
    case KURA_E_DUPLICATE_ITEM: return "DuplicateItemException";
    case KURA_E_COLLECTION_SIZE: return "ItemCollectionSizeLimitExceededException";
    case KURA_E_TXN_CONFLICT: return "TransactionConflictException";
    default: return "InternalServerError";
    }
}

static int print_items(const kura_value *items)
{
    for (size_t i = 0; items && i < kura_value_count(items); i++) {
        char *json;
        size_t len;
        if (kura_value_to_json(kura_value_at(items, i, NULL, NULL), true, &json, &len) != KURA_OK) {
            fprintf(stderr, "InternalServerError: %s\n", kura_last_error());
            return 1;
        }
        printf("%s\n", json);
        kura_free(json);
    }
    return 0;
}

/* One statement, every page of it. */
static int run_statement(kura_db *db, const char *text)
{
    char *token = NULL;
    int rc = 0;
    do {
        kura_execute_statement_req req = {.statement = text, .next_token = token};
        kura_execute_statement_res res;
        kura_status s = kura_execute_statement(db, &req, &res);
        free(token);
        token = NULL;
        if (s != KURA_OK) {
            fprintf(stderr, "%s: %s\n", error_type(s), kura_last_error());
            kura_execute_statement_res_free(&res);
            return 1;
        }
        rc = print_items(res.items);
        token = res.next_token;
        res.next_token = NULL;
        kura_execute_statement_res_free(&res);
    } while (token && rc == 0);
    free(token);
    fflush(stdout);
    return rc;
}

/* Whether text[0..n) holds something besides blanks. */
static bool blank(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i] != ' ' && t[i] != '\t' && t[i] != '\r' && t[i] != '\n') return false;
    return true;
}

/* Statements from stdin: `quote` carries an open quote from one line into the next. */
static int run_stdin(kura_db *db)
{
    char *line = NULL, *stmt = NULL;
    size_t cap = 0, len = 0, scap = 0;
    ssize_t n;
    char quote = 0;
    int rc = 0;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        for (ssize_t i = 0; i <= n; i++) {
            char c = i < n ? line[i] : '\n';
            bool end = !quote && (c == ';' || (c == '\n' && i >= n - 1));
            if (!end) {
                if (c == '\'' || c == '"') quote = quote == c ? 0 : quote ? quote : c;
                if (len + 2 > scap) {
                    scap = scap ? 2 * scap : 256;
                    char *ns = realloc(stmt, scap);
                    if (!ns) {
                        fprintf(stderr, "kura: out of memory\n");
                        free(stmt);
                        free(line);
                        return 1;
                    }
                    stmt = ns;
                }
                if (i < n) stmt[len++] = c;
                continue;
            }
            if (len && !blank(stmt, len)) {
                stmt[len] = '\0';
                rc |= run_statement(db, stmt);
            }
            len = 0;
            if (i >= n - 1) break;
        }
    }
    if (len && !blank(stmt, len)) { /* an unterminated quote at the end of the input */
        stmt[len] = '\0';
        rc |= run_statement(db, stmt);
    }
    free(stmt);
    free(line);
    return rc;
}

int kura_sql_run(kura_db *db, const char *statement)
{
    return statement ? run_statement(db, statement) : run_stdin(db);
}
