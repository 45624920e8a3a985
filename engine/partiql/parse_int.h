/*
 * parse_int.h - This file contains the parser's state, shared by parse.c (statements) and
 * parse_expr.c (conditions, operands, paths, literals): a one-token lookahead over the
 * lexer, the statement's arena and the parameters consumed so far.
 */
#ifndef KURA_PARTIQL_PARSE_INT_H
#define KURA_PARTIQL_PARSE_INT_H

#include "engine/partiql/partiql.h"

typedef struct pq_parser {
    pq_lexer lx;
    pq_tok cur; /* the lookahead */
    pq_arena *arena;
    const kura_value *params; /* L or NULL */
    uint32_t nparams;         /* '?' consumed */
    uint32_t depth;           /* open parentheses and NOTs */
    bool params_copied;       /* a '?' inside a collection */
    bool in_insert;           /* parsing INSERT's VALUE: its top-level '?' are item params */
    pq_item_param *item_params; /* arena, item_params_cap entries */
    uint32_t nitem_params, item_params_cap;
} pq_parser;

void pq_advance(pq_parser *p);
/* The syntax error for the current token: "Unexpected keyword", "Unexpected token",
 * "Unexpected end of statement" (KURA_E_INVALID). */
kura_status pq_unexpected(const pq_parser *p);
/* Consumes punctuation `s` or keyword `kw`, else the syntax error. */
kura_status pq_expect(pq_parser *p, const char *s);
kura_status pq_expect_kw(pq_parser *p, const char *kw);
/* An identifier (quoted, or unquoted and not a keyword) into the arena. */
kura_status pq_ident(pq_parser *p, const char **name_out, size_t *len_out);

kura_status pq_parse_cond(pq_parser *p, pq_node **out);
kura_status pq_parse_operand(pq_parser *p, pq_node **out); /* with + and - */
kura_status pq_parse_path(pq_parser *p, pq_node **out);
/* A literal as a value owned by the arena, or a '?' as its parameter (borrowed; *param_out
 * its index, else -1). */
kura_status pq_parse_literal(pq_parser *p, const kura_value **out, int32_t *param_out);

#endif
