/*
 * expr_int.h - internals of the expression parser (lex.c, parse*.c, names.c, reserved.c).
 *
 * This file contains what the parser's files share and nothing the evaluator needs: the
 * context's layout, the parser state, and the parser's node type. The evaluator (eval.c,
 * keycond.c, update.c, project.c) works only with expr.h.
 *
 * How a parse works (parse.c): the expression is copied into the context's arena and split
 * into tokens (lex.c); a backtracking recursive-descent parser with memoisation (a packrat
 * parser: every (rule, token) pair is parsed at most once, so nested parentheses cost linear
 * time) builds the tree, remembering the furthest token at which some rule failed. If the
 * parse fails, that token is the syntax error. Only then do the checks run, each over the
 * whole tree, in DynamoDB's order (redundant parentheses, function names, misused functions,
 * reserved words, ... then names, values and operand types left to right); the first check
 * that fails gives the message. Names and values are resolved by those checks.
 *
 * Parser nodes (expr_pnode) embed the public expr_node as their first member: the tree handed
 * out is made of &pnode->n, and the parser converts back with expr_pn(). Nodes are never
 * modified once built, because the memo may hand the same node to another alternative: a
 * node written inside parentheses is a copy with `parens` one higher.
 */
#ifndef KURA_EXPR_INT_H
#define KURA_EXPR_INT_H

#include <stdarg.h>
#include <stdbool.h>

#include "engine/expr/expr.h"
#include "engine/expr/lex.h"
#include "util/arena.h"
#include "util/status.h"

/* DynamoDB's limits on an expression. */
#define EXPR_MAX_BYTES 4096     /* "Expression size has exceeded the maximum allowed size" */
#define EXPR_MAX_OPERATORS 300  /* "The expression contains too many operators" */
#define EXPR_MAX_PATH_DEPTH 32  /* "The document path has too many nesting levels" */
#define EXPR_MAX_IN 100         /* "The IN operator is provided with too many operands" */
#define EXPR_MAX_INDEX 2147483647u /* "List index is not within the allowable range" */

struct expr_ctx {
    arena *arena;             /* every tree, path and copied expression */
    const kura_value *names;  /* borrowed; NULL = none */
    const kura_value *values; /* borrowed; NULL = none */
    bool *names_used;         /* per attribute of `names` (map order) */
    bool *values_used;
};

/* Functions, by name (case-sensitive, as in DynamoDB). */
typedef enum expr_fn {
    EXPR_FN_NONE,
    EXPR_FN_ATTR_EXISTS,
    EXPR_FN_ATTR_NOT_EXISTS,
    EXPR_FN_ATTR_TYPE,
    EXPR_FN_BEGINS_WITH,
    EXPR_FN_CONTAINS,
    EXPR_FN_SIZE,
    EXPR_FN_IF_NOT_EXISTS,
    EXPR_FN_LIST_APPEND,
    EXPR_FN_UNKNOWN,
} expr_fn;

typedef struct expr_pnode {
    expr_node n;     /* must stay first */
    uint32_t tok;    /* the node's first token: the function name, the #name or :value */
    uint8_t parens;  /* pairs of parentheses written directly around the node */
    uint8_t fn;      /* expr_fn, for function calls */
} expr_pnode;

static inline expr_pnode *expr_pn(const expr_node *n)
{
    return (expr_pnode *)n;
}

/* Memoised rules. */
enum { EXPR_R_OR, EXPR_R_NOT, EXPR_R_COND, EXPR_R_OPERAND, EXPR_R_SETVAL, EXPR_R_TERM, EXPR_NRULES };

typedef struct expr_memo {
    expr_pnode *node; /* result; NULL with done = failure */
    uint32_t end;     /* token after the match */
    bool done;
} expr_memo;

typedef struct expr_parser {
    expr_ctx *ctx;
    expr_type type;
    const char *src; /* arena copy of the expression */
    size_t len;
    expr_tok *toks;
    uint32_t ntok;   /* including the final EOF */
    uint32_t pos;    /* current token */
    uint32_t maxfail; /* furthest token at which a token match failed */
    expr_memo *memo[EXPR_NRULES]; /* malloc'ed, ntok entries each; freed by expr_parser_done */
    bool nomem;
} expr_parser;

/* ---- parse.c: shared parsing machinery ---------------------------------------------------- */

/* Checks emptiness and size, copies and lexes `s`. KURA_E_INVALID/KURA_E_NOMEM with the
 * message set; on success expr_parser_done() must be called. */
kura_status expr_parser_init(expr_parser *p, expr_ctx *ctx, expr_type type, const char *s);
void expr_parser_done(expr_parser *p);
/* KURA_E_INVALID "Invalid <type>: " + the formatted message. */
kura_status expr_fail(const expr_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The syntax error at p->maxfail (or KURA_E_NOMEM if the parse ran out of memory). */
kura_status expr_syntax_error(const expr_parser *p);

bool expr_accept(expr_parser *p, expr_tok_kind kind);
/* Records a failed match at the current token (the syntax error candidate). */
void expr_note_fail(expr_parser *p);
/* Whether the identifier at `tok` is a keyword of the expression type being parsed (AND, OR,
 * NOT, BETWEEN, IN in conditions; SET, REMOVE, ADD, DELETE in updates), which cannot name an
 * attribute or a function. */
bool expr_is_keyword(const expr_parser *p, uint32_t tok);
/* Whether the current token is the keyword `kw` (an identifier, any case); consumes it. */
bool expr_accept_kw(expr_parser *p, const char *kw);
bool expr_is_kw(const expr_parser *p, uint32_t tok, const char *kw);
expr_pnode *expr_node_new(expr_parser *p, expr_op op, uint32_t nkids, uint32_t tok);
/* A copy of `n` with one more pair of parentheses. */
expr_pnode *expr_node_paren(expr_parser *p, const expr_pnode *n);
/* ---- parse_path.c ------------------------------------------------------------------------ */

/* A growable list of nodes (the arguments of a call, the candidates of IN); v is malloc'ed. */
typedef struct expr_nodes {
    expr_node **v;
    uint32_t n, cap;
} expr_nodes;

/* '(' rule (',' rule)* ')' appended to *l; false if no match (the caller restores pos). */
bool expr_parse_list(expr_parser *p, int rule, expr_nodes *l);
/* A node with op `op` whose kids are `first` (if not NULL) followed by the list. */
expr_pnode *expr_node_from_list(expr_parser *p, expr_op op, uint32_t tok, expr_pnode *first,
                                const expr_nodes *l);
/* path: (ident|#name) ('.' (ident|#name) | '[' number ']')*; NULL on no match. */
expr_pnode *expr_parse_path_node(expr_parser *p);
/* name '(' arg (',' arg)* ')' with arguments parsed by `arg` (a memoised rule). */
expr_pnode *expr_parse_call(expr_parser *p, int arg_rule);
/* Runs memoised rule `rule` at the current token. */
expr_pnode *expr_rule(expr_parser *p, int rule);
/* Parses all tokens with `rule`: the root, or NULL (syntax error at p->maxfail, or nomem). */
expr_pnode *expr_parse_all(expr_parser *p, int rule);
/* The rules themselves (parse.c: conditions, parse_update.c: SET values). */
expr_pnode *expr_rule_or(expr_parser *p);
expr_pnode *expr_rule_not(expr_parser *p);
expr_pnode *expr_rule_cond(expr_parser *p);
expr_pnode *expr_rule_operand(expr_parser *p);
expr_pnode *expr_rule_setval(expr_parser *p);
expr_pnode *expr_rule_term(expr_parser *p);

/* ---- parse_check.c: the checks that follow a successful parse ------------------------------ */

typedef bool (*expr_visit_fn)(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                              kura_status *st);
/* Post-order, left to right; stops at the first visit that returns false. */
bool expr_walk(expr_parser *p, const expr_pnode *n, const expr_pnode *parent, expr_visit_fn fn,
               kura_status *st);
bool expr_visit_parens(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                       kura_status *st);
bool expr_visit_reserved(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                         kura_status *st);
/* Every check of a parsed condition, in DynamoDB's order. */
kura_status expr_check_condition(expr_parser *p, expr_pnode *root);
/* parse_fn.c: operand counts, operands that must be paths, operand types of a call. */
kura_status expr_check_function(expr_parser *p, const expr_pnode *n);
/* Distinct first operand, operand types and the order of the bounds of BETWEEN. */
kura_status expr_check_between(expr_parser *p, const expr_node *n);
bool expr_path_equal(const expr_path *a, const expr_path *b);
/* Path depth and list indexes, then #names: resolves the path in place. */
kura_status expr_check_path(expr_parser *p, expr_path *path);
/* Resolves a :value node. */
kura_status expr_check_value(expr_parser *p, expr_pnode *n);
/* Reserved words among the bare names of `path`. */
kura_status expr_check_path_reserved(expr_parser *p, const expr_path *path);
/* "[a, b, [2]]" into buf. */
void expr_path_str(const expr_path *path, char *buf, size_t cap);
/* The overlap/conflict check of update and projection paths. */
kura_status expr_check_overlaps(expr_parser *p, expr_path *const *paths, uint32_t n);
/* The type of a node for the operand checks: a value's type, N for size(), 0 if unknown. */
kura_type expr_node_type(const expr_pnode *n);

/* ---- names.c ------------------------------------------------------------------------------ */

/* The name "#x" stands for, or NULL if the names map does not define it; marks it used. */
const kura_value *expr_ctx_name(expr_ctx *ctx, const char *ref, size_t len);
const kura_value *expr_ctx_value(expr_ctx *ctx, const char *ref, size_t len);

/* ---- reserved.c --------------------------------------------------------------------------- */

bool expr_is_reserved(const char *p, size_t len);

#endif
