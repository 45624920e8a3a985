/*
 * heat_json.h - reading the heat report (GET /kura/heat's JSON, the contract in
 * docs/server.md, "The heat report") for the three presentations of it: the HTML page
 * (server/heat_page.c), the text and the PNG of `kura heat` (tools/kura_heat_text.c,
 * kura_heat_png.c). They all read the document as parsed by api/'s jdoc.h; what they share is
 * here: lenient number reads (a missing or null member reads as 0: a report from an older or
 * newer producer still renders), a partition key as one line of text, and thousands
 * separators.
 *
 * This file needs nothing of libmicrohttpd: the CLI compiles heat_json.c too.
 * Thread safety: every function is pure (no shared state).
 */
#ifndef KURA_SERVER_HEAT_JSON_H
#define KURA_SERVER_HEAT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jdoc.h"
#include "util/buf.h"

/* The number member `name` of obj; 0 when it is absent, null or not a number. */
double heatj_num(const jd_t *obj, const char *name);

/* The string member `name` of obj; `dflt` when it is absent or not a string. */
const char *heatj_str(const jd_t *obj, const char *name, const char *dflt);

/* Appends a key (DynamoDB JSON: {"attr": {"S": "v"}, ...}) as one line of text: its value
 * alone for a one-attribute key ("ACTIVE"), "a=v1, b=v2" for several, in the document's order.
 * S, N and B show their string; any other type shows its JSON. Every control character
 * (< 0x20, 0x7f) is written as \xNN, so a key can never break a line or drive a terminal; no
 * other escaping is done (the HTML page escapes the result for HTML). A key that is not an
 * object appends "?". Returns false when out of memory (b unchanged or partly appended). */
bool heatj_key_text(const jd_t *key, kbuf *b);

/* Appends s (NUL-terminated) with its control characters written as \xNN (as above). */
bool heatj_clean_text(const char *s, size_t len, kbuf *b);

/* v rounded to an integer with thousands separators ("1,204") into buf (>= 32 bytes). */
void heatj_thousands(double v, char *buf, size_t cap);

/* Parses a heat report; the root object, or NULL with a message in err (the document keeps
 * the tree: free it with jd_doc_free). A root that is not an object with a "targets" array is
 * refused too. */
jd_t *heatj_parse(jd_doc *doc, const char *json, size_t len, char *err, size_t err_cap);

#endif
