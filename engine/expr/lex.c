/*
 * lex.c - the lexer of DynamoDB's expression language.
 *
 * This file contains expr_lex(), which turns an expression into the token array the parser
 * walks (see lex.h for the token classes). The lexer never fails on input: a character that
 * starts no token becomes an EXPR_TOK_INVALID token of its own, so the syntax error that
 * follows reports it the way DynamoDB does ("token: \"$\"").
 */
#include <stdbool.h>
#include <string.h>

#include "engine/expr/lex.h"

static bool lex_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool lex_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool lex_word(unsigned char c)
{
    return lex_alpha(c) || lex_digit(c) || c == '_';
}

static bool lex_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Length of the UTF-8 sequence starting with byte c (1 for a stray continuation byte). */
static size_t lex_utf8_len(unsigned char c)
{
    if (c >= 0xF0 && c < 0xF8)
        return 4;
    if (c >= 0xE0)
        return c < 0xF0 ? 3 : 1;
    if (c >= 0xC0)
        return 2;
    return 1;
}

/* The punctuation token at s[i] (with its length), or EXPR_TOK_INVALID. */
static expr_tok_kind lex_punct(const char *s, size_t len, size_t i, size_t *n_out)
{
    char c = s[i], next = i + 1 < len ? s[i + 1] : 0;

    *n_out = 1;
    switch (c) {
    case '(': return EXPR_TOK_LPAREN;
    case ')': return EXPR_TOK_RPAREN;
    case '[': return EXPR_TOK_LBRACKET;
    case ']': return EXPR_TOK_RBRACKET;
    case ',': return EXPR_TOK_COMMA;
    case '.': return EXPR_TOK_DOT;
    case '=': return EXPR_TOK_EQ;
    case '+': return EXPR_TOK_PLUS;
    case '-': return EXPR_TOK_MINUS;
    case '<':
        if (next == '>' || next == '=') {
            *n_out = 2;
            return next == '>' ? EXPR_TOK_NE : EXPR_TOK_LE;
        }
        return EXPR_TOK_LT;
    case '>':
        if (next == '=') {
            *n_out = 2;
            return EXPR_TOK_GE;
        }
        return EXPR_TOK_GT;
    default:
        return EXPR_TOK_INVALID;
    }
}

/* Scans the token starting at s[i] (not whitespace); sets its kind and length. */
static void lex_one(const char *s, size_t len, size_t i, expr_tok_kind *kind_out, size_t *n_out)
{
    unsigned char c = (unsigned char)s[i];
    size_t j = i + 1;

    if (lex_alpha(c)) {
        while (j < len && lex_word((unsigned char)s[j]))
            j++;
        *kind_out = EXPR_TOK_IDENT;
    } else if ((c == '#' || c == ':') && j < len && lex_word((unsigned char)s[j])) {
        while (j < len && lex_word((unsigned char)s[j]))
            j++;
        *kind_out = c == '#' ? EXPR_TOK_NAME : EXPR_TOK_VALUE;
    } else if (lex_digit(c)) {
        while (c != '0' && j < len && lex_digit((unsigned char)s[j]))
            j++;
        *kind_out = EXPR_TOK_NUMBER;
    } else {
        *kind_out = lex_punct(s, len, i, n_out);
        if (*kind_out == EXPR_TOK_INVALID) {
            j = i + lex_utf8_len(c);
            if (j > len)
                j = len;
        } else {
            j = i + *n_out;
        }
    }
    *n_out = j - i;
}

expr_tok *expr_lex(arena *a, const char *src, size_t len, uint32_t *ntok_out)
{
    /* At most one token per byte, plus EOF. */
    expr_tok *toks = arena_alloc(a, (len + 1) * sizeof *toks);
    uint32_t n = 0;
    size_t i = 0;

    if (!toks)
        return NULL;
    while (i < len) {
        if (lex_space((unsigned char)src[i])) {
            i++;
            continue;
        }
        expr_tok_kind kind;
        size_t tlen;
        lex_one(src, len, i, &kind, &tlen);
        toks[n].kind = kind;
        toks[n].off = (uint32_t)i;
        toks[n].len = (uint32_t)tlen;
        n++;
        i += tlen;
    }
    toks[n].kind = EXPR_TOK_EOF;
    toks[n].off = (uint32_t)len;
    toks[n].len = 0;
    *ntok_out = n + 1;
    return toks;
}
