/*
 * lex.c - This file contains the PartiQL lexer: identifiers (keywords are identifiers the
 * parser compares case-insensitively), "quoted identifiers" and 'strings' (a doubled quote
 * escapes one), numbers (digits, a fraction, an exponent; the sign is the parser's) and
 * punctuation, longest match first (<< >> <= >= <> !=). Whitespace and nothing else
 * separates tokens; a character that starts no token is PQ_T_BAD, which the parser reports.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "engine/partiql/partiql.h"

static pq_tok tok(pq_lexer *lx, pq_tok_kind k, size_t start)
{
    return (pq_tok){k, lx->s + start, lx->pos - start};
}

static pq_tok lex_quoted(pq_lexer *lx, char q, pq_tok_kind k)
{
    size_t start = lx->pos++;
    while (lx->pos < lx->n) {
        if (lx->s[lx->pos] == q) {
            if (lx->pos + 1 < lx->n && lx->s[lx->pos + 1] == q) {
                lx->pos += 2;
                continue;
            }
            lx->pos++;
            return tok(lx, k, start);
        }
        lx->pos++;
    }
    return tok(lx, PQ_T_BAD, start);
}

static pq_tok lex_number(pq_lexer *lx)
{
    size_t start = lx->pos;
    const char *s = lx->s;
    while (lx->pos < lx->n && isdigit((unsigned char)s[lx->pos])) lx->pos++;
    if (lx->pos < lx->n && s[lx->pos] == '.') {
        lx->pos++;
        while (lx->pos < lx->n && isdigit((unsigned char)s[lx->pos])) lx->pos++;
    }
    if (lx->pos < lx->n && (s[lx->pos] == 'e' || s[lx->pos] == 'E')) {
        size_t e = lx->pos + 1;
        if (e < lx->n && (s[e] == '+' || s[e] == '-')) e++;
        if (e < lx->n && isdigit((unsigned char)s[e])) {
            while (e < lx->n && isdigit((unsigned char)s[e])) e++;
            lx->pos = e;
        }
    }
    return tok(lx, PQ_T_NUMBER, start);
}

static bool is_punct(char c)
{
    switch (c) {
    case '(': case ')': case '[': case ']': case '{': case '}': case ',': case '.': case ':':
    case '?': case '*': case '=': case '<': case '>': case '+': case '-': case ';':
        return true;
    default:
        return false;
    }
}

pq_tok pq_lex_next(pq_lexer *lx)
{
    static const char *const two[] = {"<<", ">>", "<=", ">=", "<>", "!="};
    while (lx->pos < lx->n && isspace((unsigned char)lx->s[lx->pos])) lx->pos++;
    if (lx->pos >= lx->n) return tok(lx, PQ_T_END, lx->pos);
    size_t start = lx->pos;
    char c = lx->s[lx->pos];
    if (c == '"') return lex_quoted(lx, '"', PQ_T_QIDENT);
    if (c == '\'') return lex_quoted(lx, '\'', PQ_T_STRING);
    if (isdigit((unsigned char)c) ||
        (c == '.' && lx->pos + 1 < lx->n && isdigit((unsigned char)lx->s[lx->pos + 1])))
        return lex_number(lx);
    if (isalpha((unsigned char)c) || c == '_') {
        while (lx->pos < lx->n &&
               (isalnum((unsigned char)lx->s[lx->pos]) || lx->s[lx->pos] == '_'))
            lx->pos++;
        return tok(lx, PQ_T_IDENT, start);
    }
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
        if (lx->pos + 1 < lx->n && memcmp(lx->s + lx->pos, two[i], 2) == 0) {
            lx->pos += 2;
            return tok(lx, PQ_T_PUNCT, start);
        }
    if (is_punct(c)) {
        lx->pos++;
        return tok(lx, PQ_T_PUNCT, start);
    }
    lx->pos++;
    return tok(lx, PQ_T_BAD, start);
}

/* Both compare the first character before anything else: the parser asks about every
 * token several times, so these are on the path of every statement. */
bool pq_tok_is_kw(const pq_tok *t, const char *kw)
{
    /* kw[len] is read only after strncasecmp found len equal non-NUL characters */
    return t->kind == PQ_T_IDENT && (t->p[0] & ~0x20) == kw[0] &&
           strncasecmp(t->p, kw, t->len) == 0 && kw[t->len] == '\0';
}

bool pq_tok_is(const pq_tok *t, const char *p)
{
    return t->kind == PQ_T_PUNCT && t->p[0] == p[0] &&
           (t->len == 1 ? p[1] == '\0' : p[1] == t->p[1] && p[2] == '\0');
}

bool pq_is_keyword(const char *p, size_t len)
{
    static const struct {
        const char *kw;
        size_t len;
    } kws[] = {
#define KW(s) {s, sizeof s - 1}
        KW("ALL"),    KW("AND"),     KW("ASC"),      KW("BETWEEN"), KW("BY"),     KW("DELETE"),
        KW("DESC"),   KW("FALSE"),   KW("FROM"),     KW("IN"),      KW("INSERT"), KW("INTO"),
        KW("IS"),     KW("MISSING"), KW("MODIFIED"), KW("NEW"),     KW("NOT"),    KW("NULL"),
        KW("OLD"),    KW("OR"),      KW("ORDER"),    KW("REMOVE"),  KW("RETURNING"),
        KW("SELECT"), KW("SET"),     KW("TRUE"),     KW("UPDATE"),  KW("VALUE"),  KW("VALUES"),
        KW("WHERE"),
#undef KW
    };
    for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++)
        if (kws[i].len == len && kws[i].kw[0] == (p[0] & ~0x20) &&
            strncasecmp(p, kws[i].kw, len) == 0)
            return true;
    return false;
}

char *pq_unquote(pq_arena *a, const pq_tok *t, size_t *len_out)
{
    char q = t->p[0];
    char *out = pq_alloc(a, t->len);
    if (!out) return NULL;
    size_t n = 0;
    for (size_t i = 1; i + 1 < t->len; i++) {
        out[n++] = t->p[i];
        if (t->p[i] == q) i++; /* the doubled quote */
    }
    out[n] = '\0';
    *len_out = n;
    return out;
}
