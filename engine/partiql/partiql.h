/*
 * partiql.h - This file contains the interface of DynamoDB's PartiQL dialect in kura: the
 * statement AST the parser builds (parse.c, parse_expr.c, lex.c) and the plan the translator
 * makes of it (translate*.c): one of kura.h's item requests (GetItem, Query, Scan, PutItem,
 * UpdateItem, DeleteItem) with expression text in DynamoDB's expression language and
 * generated #n<i> / :v<i> placeholders, so that engine/expr is the one evaluator of
 * conditions and values. docs/partiql.md lists the dialect.
 *
 * Memory: a statement and everything in it lives in one arena (pq_arena, arena.c) owned by
 * the pq_stmt; attribute values of literals and parameters are kura_values the arena frees.
 * A plan owns its strings and maps (pq_plan_free). Thread safety: none needed; every object
 * belongs to the call that made it.
 *
 * Errors: KURA_E_INVALID with DynamoDB's message through kura_err(), e.g.
 *   Statement wasn't well formed, can't be processed: Unexpected token
 *   Where clause does not contain a mandatory equality on all key attributes
 */
#ifndef KURA_PARTIQL_H
#define KURA_PARTIQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

/* The prefix of every syntax error's message. */
#define PQ_MSG_SYNTAX "Statement wasn't well formed, can't be processed: "
#define PQ_MSG_NO_KEY "Where clause does not contain a mandatory equality on all key attributes"
#define PQ_MSG_PARAMS "Number of parameters in request and statement don't match."
#define PQ_MSG_DUPLICATE "Duplicate primary key exists in table"
#define PQ_MSG_ORDER_SCAN                                                                         \
    "Must have at least one non-optional hash key condition in WHERE clause when using "       \
    "ORDER BY clause."

/* ---- Arena (arena.c) ---------------------------------------------------------------------- */

/* The first bytes and values live in the arena itself (a statement of a point read or write
 * needs no malloc for its tree); larger statements chain chunks. Zero-initialise. */
#define PQ_ARENA_INLINE 1536
typedef struct pq_arena {
    struct pq_chunk *chunks;
    size_t inline_used;
    kura_value **values; /* freed with the arena: inline_values, then a malloc'ed copy */
    size_t nvalues, values_cap;
    kura_value *inline_values[8];
    _Alignas(16) unsigned char inline_bytes[PQ_ARENA_INLINE];
} pq_arena;

/* Zeroed memory of n bytes that lives until pq_arena_free; NULL when out of memory. */
void *pq_alloc(pq_arena *a, size_t n);
/* A NUL-terminated copy of s[0..n). */
char *pq_strdup(pq_arena *a, const char *s, size_t n);
/* Hands v to the arena (freed with it). Frees v and returns false when out of memory. */
bool pq_adopt(pq_arena *a, kura_value *v);
void pq_arena_free(pq_arena *a);

/* ---- AST ---------------------------------------------------------------------------------- */

typedef enum pq_kind {
    PQ_PATH,     /* path */
    PQ_VALUE,    /* value: a literal (owned by the arena) or a parameter (`param`, borrowed
                  * from the parameters) */
    PQ_MISSING,  /* the literal MISSING */
    PQ_EQ, PQ_NE, PQ_LT, PQ_LE, PQ_GT, PQ_GE, /* kids[0] op kids[1] */
    PQ_BETWEEN,  /* kids[0] BETWEEN kids[1] AND kids[2] */
    PQ_IN,       /* kids[0] IN (kids[1..]) */
    PQ_IS_NULL, PQ_IS_MISSING, /* kids[0] IS [NOT] NULL|MISSING; `negated` for NOT */
    PQ_AND, PQ_OR, PQ_NOT,
    PQ_PLUS, PQ_MINUS, /* update values */
    PQ_CALL,     /* name(kids...) */
} pq_kind;

/* One step of a path: a name (quoted or not) or a list index. */
typedef struct pq_step {
    bool is_index;
    uint32_t index;
    const char *name; /* NUL-terminated, in the arena */
    size_t name_len;
} pq_step;

typedef struct pq_node {
    pq_kind kind;
    bool negated;            /* IS NOT ... */
    const char *name;        /* PQ_CALL: the function, lower case */
    pq_step *steps;          /* PQ_PATH */
    uint32_t nsteps;
    const kura_value *value; /* PQ_VALUE */
    int32_t param;           /* PQ_VALUE: the parameter's index, -1 for a literal */
    struct pq_node **kids;
    uint32_t nkids;
} pq_node;

typedef enum pq_stmt_kind { PQ_SELECT = 1, PQ_INSERT, PQ_UPDATE, PQ_DELETE } pq_stmt_kind;

/* INSERT ... VALUE {'attr': ?}: attribute `name` holds parameter `param`. */
typedef struct pq_item_param {
    const char *name; /* in the arena */
    size_t len;
    uint32_t param;
} pq_item_param;

/* One SET or REMOVE of an UPDATE, in statement order. */
typedef struct pq_assign {
    bool remove;
    pq_node *path;
    pq_node *value; /* SET */
} pq_assign;

typedef struct pq_stmt {
    pq_stmt_kind kind;
    const char *table;
    const char *index;       /* SELECT FROM "t"."i"; NULL otherwise */
    pq_node **proj;          /* SELECT a, b.c: nproj paths; none with * */
    uint32_t nproj;
    pq_node *where;          /* NULL: none */
    pq_node *order_by;       /* a path, NULL: none */
    bool order_desc;
    const kura_value *item;  /* INSERT: the VALUE (M) */
    pq_assign *assigns;      /* UPDATE */
    uint32_t nassigns;
    kura_return_values returning;
    uint32_t nparams;        /* '?' seen */
    bool params_copied;      /* a '?' inside a collection literal: its value is in the tree,
                              * so no plan of this statement can be reused (cache.c) ... */
    pq_item_param *item_params; /* ... except an attribute of INSERT's VALUE that is a '?':
                                 * those are listed here (arena) and rebound */
    uint32_t nitem_params;
    pq_arena arena;
} pq_stmt;

/*
 * Parses `text` (n bytes) into *stmt_out (free with pq_stmt_free). `params` (L, or NULL for
 * none) gives the values of the '?' in order; their count must match
 * (PQ_MSG_PARAMS). A '?' that is a whole operand borrows its parameter (no copy), so `params`
 * must outlive the statement; inside a [list], <<set>> or {map} it is copied. Errors:
 * KURA_E_INVALID (PQ_MSG_SYNTAX + detail), KURA_E_NOMEM.
 */
kura_status pq_parse(const char *text, size_t n, const kura_value *params, pq_stmt **stmt_out);
void pq_stmt_free(pq_stmt *s);

/* ---- Lexer (lex.c) ------------------------------------------------------------------------ */

typedef enum pq_tok_kind {
    PQ_T_END = 0,
    PQ_T_IDENT,   /* unquoted identifier or keyword */
    PQ_T_QIDENT,  /* "quoted" ("" escapes a quote) */
    PQ_T_STRING,  /* 'string' ('' escapes a quote) */
    PQ_T_NUMBER,
    PQ_T_PUNCT,   /* ( ) [ ] { } , . : ? * = <> != < <= > >= + - << >> ; */
    PQ_T_BAD,     /* a character that starts no token, an unterminated quote */
} pq_tok_kind;

typedef struct pq_tok {
    pq_tok_kind kind;
    const char *p; /* the token's text in the statement (quotes included) */
    size_t len;
} pq_tok;

typedef struct pq_lexer {
    const char *s;
    size_t n, pos;
} pq_lexer;

/* The next token; PQ_T_END at the end, again and again. */
pq_tok pq_lex_next(pq_lexer *lx);
/* Whether tok is the keyword kw (upper case), compared case-insensitively. */
bool pq_tok_is_kw(const pq_tok *tok, const char *kw);
/* Whether tok is the punctuation `p`. */
bool pq_tok_is(const pq_tok *tok, const char *p);
/* Whether an unquoted identifier is a reserved word of the dialect. */
bool pq_is_keyword(const char *p, size_t len);
/* A quoted token's text unescaped into the arena (NULL when out of memory). */
char *pq_unquote(pq_arena *a, const pq_tok *tok, size_t *len_out);

/* ---- Plans (translate.c) ------------------------------------------------------------------ */

typedef enum pq_plan_kind { PQ_P_GET = 1, PQ_P_QUERY, PQ_P_SCAN, PQ_P_PUT, PQ_P_UPDATE, PQ_P_DELETE } pq_plan_kind;

/* The key attributes of the table (or the index a SELECT names). */
typedef struct pq_keys {
    const char *hash;
    const char *range; /* NULL: none */
} pq_keys;

/* Where a plan holds the value of a parameter: the values-map entry `placeholder` (":v3"), a
 * key attribute, or attribute `attr` of an INSERT's item. cache.c reruns a plan with other
 * parameters by putting theirs there. */
typedef enum pq_bind_kind { PQ_BIND_VALUE, PQ_BIND_KEY_HASH, PQ_BIND_KEY_RANGE, PQ_BIND_ITEM } pq_bind_kind;
typedef struct pq_binding {
    uint32_t param;
    pq_bind_kind kind;
    char placeholder[16]; /* PQ_BIND_VALUE */
    char *attr;           /* PQ_BIND_ITEM: the attribute name (malloc'ed, the plan's) */
    kura_value *slot;     /* cache.c: the map entry the value goes into (NULL until cached) */
    uint8_t type;         /* cache.c: PQ_BIND_VALUE: the value's type when the plan's
                           * expressions were parsed */
} pq_binding;

/* What a statement becomes. The strings and maps are owned by the plan. */
typedef struct pq_plan {
    pq_plan_kind kind;
    const char *table, *index; /* borrowed from the statement */
    kura_value *key;           /* GET, UPDATE, DELETE */
    kura_value *item;          /* PUT (a copy of the VALUE) */
    kura_value *names, *values; /* ExpressionAttributeNames/Values, NULL when empty */
    char *key_condition;       /* QUERY */
    char *condition;           /* PUT, UPDATE, DELETE; FILTER of QUERY and SCAN */
    char *update;              /* UPDATE */
    char *projection;          /* GET, QUERY, SCAN; NULL: all attributes */
    bool backward;             /* QUERY ... ORDER BY sk DESC */
    kura_return_values return_values;
    pq_binding *bindings;      /* every parameter the plan holds (malloc'ed) */
    uint32_t nbindings;
} pq_plan;

/* Translates a parsed statement given its table's (or index's) keys into *plan_out (zeroed
 * first; free with pq_plan_free even on failure). Errors: KURA_E_INVALID with DynamoDB's
 * message, KURA_E_NOMEM. */
kura_status pq_translate(const pq_stmt *st, const pq_keys *keys, pq_plan *plan_out);
void pq_plan_free(pq_plan *p);

/* ---- Running statements (prepare.c, exec.c) ---------------------------------------------- */

/* A statement ready to run: parsed, its table's keys looked up, translated. */
typedef struct pq_prepared {
    pq_stmt *stmt;
    pq_plan plan;
} pq_prepared;

/* Parses, looks up the table (KURA_E_RESOURCE_NOT_FOUND "Requested resource not found") and
 * the index of a SELECT (KURA_E_INVALID), and translates. Free *out with pq_prepared_free,
 * also on failure. */
kura_status pq_prepare(kura_db *db, const char *text, const kura_value *params,
                       pq_prepared *out);
void pq_prepared_free(pq_prepared *p);
/* pq_prepare, also giving copies of the key names the translation used in *keys_out (free
 * with pq_keys_free, also on failure). */
kura_status pq_prepare_keys(kura_db *db, const char *text, const kura_value *params,
                            pq_prepared *out, pq_keys *keys_out);
void pq_keys_free(pq_keys *k);
/* kura_execute_statement's path: the plan from this thread's cache (cache.c) when the text
 * ran before, else pq_prepare_keys + pq_run, the plan then kept. res_out zeroed first. `enc`
 * (may be NULL): kura_execute_statement_encoded's buffer (engine/partiql_encoded.h). */
kura_status pq_cached_run(kura_db *db, const kura_execute_statement_req *req, kbuf *enc,
                          bool *encoded_out, kura_execute_statement_res *res_out);
/* Runs a prepared statement as kura_execute_statement describes (res_out zeroed first). */
kura_status pq_run(kura_db *db, const pq_prepared *p, const kura_execute_statement_req *req,
                   kura_execute_statement_res *res_out);
/* pq_run of a plan whose GET, PUT, UPDATE or DELETE takes `pre` (engine/item_int.h: the
 * plan's expressions parsed ahead, the key names it was made for; NULL: none). */
struct item_pre;
kura_status pq_run_plan(kura_db *db, const pq_plan *p, struct item_pre *pre,
                        const kura_execute_statement_req *req,
                        kura_execute_statement_res *res_out);
/* The NextToken of a LastEvaluatedKey (malloc'ed) and back (KURA_E_INVALID "Invalid
 * NextToken" for text no LastEvaluatedKey gives). */
kura_status pq_token_encode(const kura_value *key, char **token_out);
kura_status pq_token_decode(const char *token, kura_value **key_out);

/* ---- Expression text (render.c) ----------------------------------------------------------- */

/* Builds expression text with placeholders; the names and values maps grow as it goes. */
typedef struct pq_render {
    kbuf text;
    kura_value *names, *values;
    uint32_t nnames, nvalues;
    pq_binding *bindings; /* the parameters among the values (malloc'ed) */
    uint32_t nbindings, bindings_cap;
} pq_render;

kura_status pq_render_path(pq_render *r, const pq_node *path);
/* A value placeholder for v (copied into the values map); `param` >= 0 records where
 * parameter `param` went (pq_binding). */
kura_status pq_render_value(pq_render *r, const kura_value *v, int32_t param);
/* Records a binding (KURA_E_NOMEM). */
kura_status pq_bind(pq_binding **b, uint32_t *n, uint32_t *cap, const pq_binding *add);
kura_status pq_render_text(pq_render *r, const char *text);
/* A condition (WHERE predicates) or an update operand. */
kura_status pq_render_cond(pq_render *r, const pq_node *n);
kura_status pq_render_operand(pq_render *r, const pq_node *n);
/* The text so far as a malloc'ed string (the buffer is reset); NULL when out of memory. */
char *pq_render_take(pq_render *r);
void pq_render_free(pq_render *r);

#endif
