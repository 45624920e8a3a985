/*
 * lex.h - the tokens of DynamoDB's expression language (private to the parser).
 *
 * This file contains the lexer shared by the five expression types. It splits an expression
 * into the tokens DynamoDB's own grammar uses, so that a syntax error names the same token
 * DynamoDB names ("Syntax error; token: \"-\", near: \"a-b\""):
 *   identifiers  [A-Za-z][A-Za-z0-9_]*   (keywords such as AND or SET are identifiers here;
 *                                         the parser recognises them, case-insensitively)
 *   #name        '#' [A-Za-z0-9_]+       ':value'   ':' [A-Za-z0-9_]+
 *   numbers      0 | [1-9][0-9]*          ("01" is the two tokens 0 and 1, as in DynamoDB)
 *   ( ) [ ] , . = <> < <= > >= + -
 *   anything else is a one-character EXPR_TOK_INVALID token (a whole UTF-8 sequence), which
 *   no rule accepts, so it becomes the syntax error's token.
 * Whitespace (space, tab, CR, LF) separates tokens. The last token is always EXPR_TOK_EOF.
 */
#ifndef KURA_EXPR_LEX_H
#define KURA_EXPR_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

typedef enum expr_tok_kind {
    EXPR_TOK_EOF,
    EXPR_TOK_IDENT,
    EXPR_TOK_NAME,  /* #name */
    EXPR_TOK_VALUE, /* :value */
    EXPR_TOK_NUMBER,
    EXPR_TOK_LPAREN, EXPR_TOK_RPAREN, EXPR_TOK_LBRACKET, EXPR_TOK_RBRACKET,
    EXPR_TOK_COMMA, EXPR_TOK_DOT,
    EXPR_TOK_EQ, EXPR_TOK_NE, EXPR_TOK_LT, EXPR_TOK_LE, EXPR_TOK_GT, EXPR_TOK_GE,
    EXPR_TOK_PLUS, EXPR_TOK_MINUS,
    EXPR_TOK_INVALID,
} expr_tok_kind;

/* A token: src[off, off + len). EXPR_TOK_EOF has off = the input length and len 0. */
typedef struct expr_tok {
    expr_tok_kind kind;
    uint32_t off, len;
} expr_tok;

/* Splits src[0, len) into tokens allocated from `a` (they live as long as the arena).
 * Returns the number of tokens including the final EOF through *ntok_out, or NULL when out of
 * memory. Never fails on any input otherwise. */
expr_tok *expr_lex(arena *a, const char *src, size_t len, uint32_t *ntok_out);

#endif
