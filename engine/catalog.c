/*
 * catalog.c - the database catalog file KURA (docs/format/catalog.md): which trees exist, with
 * their partition counts and flags. Text, one line per tree, a CRC-32C line at the end,
 * replaced atomically.
 */
#include "engine/db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/crc32c.h"
#include "util/status.h"

enum { CATALOG_VERSION = 1, CATALOG_MAX_BYTES = 1 << 20 };

bool tree_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

kura_status catalog_write(kura_db *db)
{
    kbuf b = KBUF_INIT;
    char line[512];
    int n = snprintf(line, sizeof line, "kura %d\n", CATALOG_VERSION);
    bool ok = kbuf_append(&b, line, (size_t)n);
    for (size_t i = 0; i < db->ntrees && ok; i++) {
        kura_tree *t = db->trees[i];
        n = snprintf(line, sizeof line, "tree %s %u %u\n", t->name, t->nparts,
                     (t->hash_prefixed ? 1u : 0u) | t->flags);
        ok = kbuf_append(&b, line, (size_t)n);
    }
    if (ok) {
        n = snprintf(line, sizeof line, "crc32c %08x\n", crc32c(b.data, b.len));
        ok = kbuf_append(&b, line, (size_t)n);
    }
    kura_status s = ok ? io_write_file_atomic(db->io, db->dir, "KURA", IO_KIND_CURRENT, b.data,
                                              b.len)
                       : kura_err(KURA_E_NOMEM, "catalog: out of memory");
    kbuf_free(&b);
    return s;
}

kura_status catalog_load(kura_db *db)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/KURA", db->dir);
    void *data = NULL;
    size_t len = 0;
    kura_status s = io_read_file(db->io, path, IO_KIND_CURRENT, CATALOG_MAX_BYTES, &data, &len);
    if (s == KURA_E_NOT_FOUND)
        return catalog_write(db); /* a new database */
    if (s != KURA_OK)
        return s;
    /* the last line is "crc32c XXXXXXXX" over everything before it */
    char *text = data, *save = NULL;
    char *crc_line = len >= 16 ? text + len - 16 : NULL;
    unsigned stored = 0;
    if (!crc_line || sscanf(crc_line, "crc32c %8x\n", &stored) != 1 ||
        crc_line[15] != '\n' || stored != crc32c(text, len - 16)) {
        free(data);
        return kura_err(KURA_E_CORRUPTION, "%s: checksum mismatch or missing (%zu bytes)", path,
                        len);
    }
    *crc_line = 0;
    int version = 0;
    size_t lineno = 0;
    for (char *line = strtok_r(text, "\n", &save); line && s == KURA_OK;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char name[256];
        unsigned parts, flags;
        if (lineno == 1) {
            if (sscanf(line, "kura %d", &version) != 1 || version != CATALOG_VERSION)
                s = kura_err(KURA_E_CORRUPTION, "%s: unknown catalog header \"%.40s\"", path,
                             line);
            continue;
        }
        if (sscanf(line, "tree %255s %u %u", name, &parts, &flags) != 3 ||
            !tree_name_valid(name) || parts < 1 || parts > 256 ||
            (flags & ~(1u | TREE_FLAGS_KNOWN)) ||
            ((flags & TREE_SEQ_REPLAY) && !(flags & TREE_NO_WAL))) {
            s = kura_err(KURA_E_CORRUPTION, "%s: malformed line %zu", path, lineno);
            break;
        }
        kura_tree *t = calloc(1, sizeof *t);
        if (!t || !(t->name = strdup(name))) {
            free(t);
            s = kura_err(KURA_E_NOMEM, "catalog: out of memory");
            break;
        }
        t->db = db;
        t->nparts = parts;
        t->hash_prefixed = flags & 1;
        t->flags = flags & TREE_FLAGS_KNOWN;
        s = tree_open_parts(db, t, false);
        if (s != KURA_OK) {
            tree_close(t);
            break;
        }
        if (db->ntrees == db->trees_cap) {
            size_t cap = db->trees_cap ? db->trees_cap * 2 : 8;
            kura_tree **nt = realloc(db->trees, cap * sizeof *nt);
            if (!nt) {
                tree_close(t);
                s = kura_err(KURA_E_NOMEM, "catalog: out of memory");
                break;
            }
            db->trees = nt;
            db->trees_cap = cap;
        }
        db->trees[db->ntrees++] = t;
    }
    if (s == KURA_OK && version != CATALOG_VERSION)
        s = kura_err(KURA_E_CORRUPTION, "%s: empty catalog", path);
    free(data);
    /* every partition recovered: the database-wide sequence continues from the highest */
    return s;
}
