/*
 * kura_heat.h - `kura heat`: the heat report (docs/server.md, "The heat report") of a running
 * kura-server (--server URL, fetched from GET /kura/heat with libcurl) or of a database
 * directory, printed as text, as its JSON (--json), or drawn into a PNG (--png FILE, cairo)
 * for a design review. The renderers take the report's JSON, whichever produced it.
 *
 * Thread safety: the renderers are pure (no shared state); kura_heat_main is a program's main.
 */
#ifndef KURA_TOOLS_KURA_HEAT_H
#define KURA_TOOLS_KURA_HEAT_H

#include <stdbool.h>
#include <stddef.h>

#include "kura.h"
#include "util/buf.h"

/* Bars of the text report: this many '#' are the per-key limit (100%). */
#define KURA_HEAT_BAR_WIDTH 40

/* The PNG's width in pixels; its height follows the report (kura_heat_png). */
#define KURA_HEAT_PNG_WIDTH 1000

/* Appends the report json[0..len) as text to *out (the caller frees it): a header line (window,
 * throttling, key limits), every verdict, then per table and index its rates and a table of its
 * hot keys and hot items with bars of '#' against the key limit ('|' marks 100%). `offline`
 * (a database directory, no server) adds the line that the rates come from a running server.
 * Keys and verdicts are user data: control characters are printed as \xNN. Errors:
 * KURA_E_INVALID (not a heat report; the message in err), KURA_E_NOMEM. */
kura_status kura_heat_text(const char *json, size_t len, bool offline, kbuf *out, char *err,
                           size_t err_cap);

/* Draws the report into a PNG at `path`: per table and index its timeline (RCU/s, WCU/s,
 * throttled requests) and its hot keys as bars against the key-limit line (and the provisioned
 * line), with labels. *width_out x *height_out is the image's size (KURA_HEAT_PNG_WIDTH wide).
 * Errors: KURA_E_INVALID (not a heat report), KURA_E_IO (cannot write `path`), KURA_E_NOMEM;
 * the message in err. */
kura_status kura_heat_png(const char *json, size_t len, const char *path, int *width_out,
                          int *height_out, char *err, size_t err_cap);

/* `kura heat ...` with argv[0] == "heat"; returns the exit status (0, 1 the server answered an
 * error, 2 usage, 3 cannot reach the server or open the database). */
int kura_heat_main(int argc, char **argv);

#endif
