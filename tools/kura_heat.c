/*
 * kura_heat.c - This file contains `kura heat` (kura_heat.h): its arguments, where the report
 * comes from, and what is printed.
 *
 *   kura heat --server URL [--window N] [--table T] [--json] [--png FILE]
 *       GET URL/kura/heat?window=N[&table=T] from a running kura-server (libcurl).
 *   kura heat DIR [--window N] [--table T] [--json] [--png FILE]
 *       The report of a database directory opened by this process: the tables and indexes
 *       with what is known offline (the rates of a process that serves no traffic are 0, and
 *       the text says so).
 *
 * The report is printed as text (kura_heat_text.c), or as its JSON with --json; --png FILE
 * also draws it (kura_heat_png.c). Exit status: 0; 1 the server or the producer answered an
 * error (its body or message on stderr); 2 usage; 3 the server cannot be reached or the
 * database cannot be opened, or the PNG cannot be written.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/heat_report.h"
#include "tools/kura_heat.h"

#define EXIT_ERROR 1
#define EXIT_USAGE 2
#define EXIT_UNREACHABLE 3

typedef struct heat_args {
    const char *server, *dir, *table, *png;
    unsigned window;
    bool json;
} heat_args;

static int usage(void)
{
    fprintf(stderr,
            "usage: kura heat --server URL [--window N] [--table T] [--json] [--png FILE]\n"
            "       kura heat DIR [--window N] [--table T] [--json] [--png FILE]\n"
            "Prints the heat report (per table and index: rates, verdicts, hot keys against\n"
            "the per-key limits of 3,000 RCU and 1,000 WCU a second) of a running kura-server\n"
            "(GET /kura/heat) or of a database directory; --json prints its JSON, --png FILE\n"
            "also draws its charts. --window: seconds averaged over, 1..60 (default 60).\n");
    return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, heat_args *a)
{
    memset(a, 0, sizeof *a);
    a->window = HEAT_DEFAULT_WINDOW_S;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--server") == 0 && more) {
            a->server = argv[++i];
        } else if (strcmp(argv[i], "--table") == 0 && more) {
            a->table = argv[++i];
        } else if (strcmp(argv[i], "--png") == 0 && more) {
            a->png = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0) {
            a->json = true;
        } else if (strcmp(argv[i], "--window") == 0 && more) {
            char *end;
            unsigned long w = strtoul(argv[++i], &end, 10);
            if (*end || !*argv[i] || *argv[i] == '-' || w < 1 || w > HEAT_MAX_WINDOW_S) {
                fprintf(stderr, "kura heat: --window takes 1..%u seconds\n", HEAT_MAX_WINDOW_S);
                return EXIT_USAGE;
            }
            a->window = (unsigned)w;
        } else if (argv[i][0] != '-' && !a->dir) {
            a->dir = argv[i];
        } else {
            return usage();
        }
    }
    if (!a->server == !a->dir) return usage(); /* exactly one source */
    return 0;
}

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    return kbuf_append(arg, p, size * n) ? size * n : 0;
}

/* GET server/kura/heat into *body (NUL-terminated); an exit status. */
static int fetch(const heat_args *a, kbuf *body)
{
    CURL *c = curl_easy_init();
    if (!c) return EXIT_UNREACHABLE;
    char *table = a->table ? curl_easy_escape(c, a->table, 0) : NULL;
    size_t n = strlen(a->server);
    while (n > 0 && a->server[n - 1] == '/')
        n--;
    char *url = malloc(n + 64 + (table ? strlen(table) : 0));
    int rc = 0;
    if (url) {
        sprintf(url, "%.*s/kura/heat?window=%u%s%s", (int)n, a->server, a->window,
                table ? "&table=" : "", table ? table : "");
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        CURLcode cc = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (cc != CURLE_OK) {
            fprintf(stderr, "kura heat: GET %s: %s\n", url, curl_easy_strerror(cc));
            rc = EXIT_UNREACHABLE;
        } else if (!kbuf_append(body, "", 1)) {
            rc = EXIT_UNREACHABLE;
        } else if (status != 200) {
            fprintf(stderr, "kura heat: GET %s: HTTP %ld %s\n", url, status, (char *)body->data);
            rc = EXIT_ERROR;
        }
    }
    free(url);
    curl_free(table);
    curl_easy_cleanup(c);
    return url ? rc : EXIT_UNREACHABLE;
}

/* The report of a database directory: the one call of the producer (heat_report.h). */
static int from_dir(const heat_args *a, kbuf *body)
{
    kura_options opts;
    kura_options_init(&opts);
    kura_db *db;
    kura_status s = kura_open(a->dir, &opts, &db);
    if (s != KURA_OK) {
        fprintf(stderr, "kura heat: cannot open %s: %s: %s\n", a->dir, kura_status_str(s),
                kura_last_error());
        return EXIT_UNREACHABLE;
    }
    char *json = NULL;
    size_t len = 0;
    s = heat_report_json(db, a->table, a->window, &json, &len);
    int rc = 0;
    if (s != KURA_OK) {
        fprintf(stderr, "kura heat: %s: %s\n", kura_status_str(s), kura_last_error());
        rc = EXIT_ERROR;
    } else if (!kbuf_append(body, json, len) || !kbuf_append(body, "", 1)) {
        rc = EXIT_UNREACHABLE;
    }
    free(json);
    s = kura_close(db);
    if (s != KURA_OK && rc == 0) {
        fprintf(stderr, "kura heat: closing %s: %s\n", a->dir, kura_last_error());
        rc = EXIT_UNREACHABLE;
    }
    return rc;
}

/* Prints (text or JSON) and draws the report in body (len bytes + NUL). */
static int present(const heat_args *a, const kbuf *body)
{
    const char *json = (const char *)body->data;
    size_t len = body->len - 1;
    char err[256];
    kura_status s;
    if (a->json) {
        fwrite(json, 1, len, stdout);
        fputc('\n', stdout);
    } else {
        kbuf text = KBUF_INIT;
        s = kura_heat_text(json, len, a->dir != NULL, &text, err, sizeof err);
        if (s != KURA_OK) {
            fprintf(stderr, "kura heat: %s\n", s == KURA_E_NOMEM ? "out of memory" : err);
            kbuf_free(&text);
            return EXIT_ERROR;
        }
        fwrite(text.data, 1, text.len, stdout);
        kbuf_free(&text);
    }
    int w, h;
    if (a->png && (s = kura_heat_png(json, len, a->png, &w, &h, err, sizeof err)) != KURA_OK) {
        fprintf(stderr, "kura heat: %s\n", s == KURA_E_NOMEM ? "out of memory" : err);
        return s == KURA_E_INVALID ? EXIT_ERROR : EXIT_UNREACHABLE;
    }
    if (a->png) fprintf(stderr, "kura heat: wrote %s (%dx%d)\n", a->png, w, h);
    return 0;
}

int kura_heat_main(int argc, char **argv)
{
    heat_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    kbuf body = KBUF_INIT;
    if (a.server) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        rc = fetch(&a, &body);
        curl_global_cleanup();
    } else {
        rc = from_dir(&a, &body);
    }
    if (rc == 0) rc = present(&a, &body);
    kbuf_free(&body);
    fflush(stdout);
    return rc;
}
