/*
 * heat_page.h - the heat page, GET /kura/heat.html on kura-server (docs/server.md, "The heat
 * page"): the heat report (heat_report.h; the JSON of GET /kura/heat) as a page a person
 * reads in a browser.
 *
 * The page is self-contained (inline CSS and a small vanilla script, nothing fetched from
 * elsewhere) and readable without JavaScript: the report of the request's time is rendered
 * into it here, in C, as HTML tables (rates, hot keys with bars against the per-key limit,
 * hot items, throttled keys, largest collections) under the verdicts; the script
 * (heat_page_assets.c) then fetches GET /kura/heat every 2 s and replaces that with live SVG
 * charts. Every string of the report (keys are user data, verdicts quote them) is escaped for
 * HTML here and set as text, never as markup, by the script.
 *
 * This file needs nothing of libmicrohttpd (heat_http.c serves the page).
 * Thread safety: every function may run on any thread at once.
 */
#ifndef KURA_SERVER_HEAT_PAGE_H
#define KURA_SERVER_HEAT_PAGE_H

#include <stddef.h>

#include "kura.h"
#include "util/buf.h"

/* Appends the whole page for the report heat_json[0..len) to *html_out (the caller owns and
 * frees it: kbuf_free). The page's script fetches GET /kura/heat with the page's own query
 * (?window=N&table=T), so the live report is the one rendered. Errors: KURA_E_INVALID when heat_json is not a heat report (an object with a "targets"
 * array), the parser's message in err[0..err_cap); KURA_E_NOMEM. *html_out may hold part of
 * a page after an error. */
kura_status heat_page_render(const char *heat_json, size_t len, kbuf *html_out, char *err,
                             size_t err_cap);

/* Appends s[0..len) escaped for HTML text and attribute values (& < > " ' and control
 * characters as \xNN). Returns false when out of memory. */
bool heat_html_escape(kbuf *b, const char *s, size_t len);

/* The page's <style> and <script> elements (heat_page_assets.c), NUL-terminated. */
extern const char heat_page_style[];
extern const char heat_page_script[];

#endif
