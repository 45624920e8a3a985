/*
 * version_edit.c - encoding of MANIFEST records (docs/format/manifest.md): a sequence of
 * tagged fields, each tag a varint.
 */
#include "engine/lsm/version_edit.h"

#include <stdlib.h>
#include <string.h>

#include "engine/lsm/shared.h"
#include "util/status.h"

enum {
    TAG_LOG_NUMBER = 1,
    TAG_NEXT_FILE = 2,
    TAG_LAST_SEQ = 3,
    TAG_DELETED_FILE = 4,
    TAG_NEW_FILE = 5,
    TAG_WAL_END = 6,
    TAG_USER_META = 7,
};

void edit_init(version_edit *e)
{
    memset(e, 0, sizeof *e);
}

void edit_free(version_edit *e)
{
    for (size_t i = 0; i < e->nadded; i++) {
        kbuf_free(&e->added[i].smallest);
        kbuf_free(&e->added[i].largest);
    }
    free(e->added);
    free(e->deleted);
    free(e->wal_ends);
    kbuf_free(&e->user_meta);
    edit_init(e);
}

static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

kura_status edit_add_file(version_edit *e, int level, uint64_t number, uint64_t file_size,
                          uint64_t entries, uint64_t min_seq, uint64_t max_seq,
                          const uint8_t *smallest, size_t slen, const uint8_t *largest,
                          size_t llen)
{
    if (!grow((void **)&e->added, &e->added_cap, e->nadded, sizeof *e->added))
        return kura_err(KURA_E_NOMEM, "version edit: out of memory");
    edit_file *f = &e->added[e->nadded];
    memset(f, 0, sizeof *f);
    f->level = level;
    f->number = number;
    f->file_size = file_size;
    f->entries = entries;
    f->min_seq = min_seq;
    f->max_seq = max_seq;
    if (!kbuf_append(&f->smallest, smallest, slen) || !kbuf_append(&f->largest, largest, llen)) {
        kbuf_free(&f->smallest);
        kbuf_free(&f->largest);
        return kura_err(KURA_E_NOMEM, "version edit: out of memory");
    }
    e->nadded++;
    return KURA_OK;
}

kura_status edit_delete_file(version_edit *e, int level, uint64_t number)
{
    if (!grow((void **)&e->deleted, &e->deleted_cap, e->ndeleted, sizeof *e->deleted))
        return kura_err(KURA_E_NOMEM, "version edit: out of memory");
    e->deleted[e->ndeleted++] = (edit_deleted){level, number};
    return KURA_OK;
}

kura_status edit_add_wal_end(version_edit *e, uint64_t number, uint64_t end)
{
    if (!grow((void **)&e->wal_ends, &e->wal_ends_cap, e->nwal_ends, sizeof *e->wal_ends))
        return kura_err(KURA_E_NOMEM, "version edit: out of memory");
    e->wal_ends[e->nwal_ends++] = (edit_wal_end){number, end};
    return KURA_OK;
}

kura_status edit_set_user_meta(version_edit *e, const uint8_t *p, size_t len)
{
    e->user_meta.len = 0;
    if (!kbuf_append(&e->user_meta, p, len))
        return kura_err(KURA_E_NOMEM, "version edit: out of memory");
    e->has_user_meta = true;
    return KURA_OK;
}

kura_status edit_encode(const version_edit *e, kbuf *out)
{
    bool ok = true;
    if (e->has_log_number)
        ok = ok && kbuf_put_varint(out, TAG_LOG_NUMBER) && kbuf_put_varint(out, e->log_number);
    if (e->has_next_file)
        ok = ok && kbuf_put_varint(out, TAG_NEXT_FILE) && kbuf_put_varint(out, e->next_file);
    if (e->has_last_seq)
        ok = ok && kbuf_put_varint(out, TAG_LAST_SEQ) && kbuf_put_varint(out, e->last_seq);
    for (size_t i = 0; i < e->ndeleted; i++)
        ok = ok && kbuf_put_varint(out, TAG_DELETED_FILE) &&
             kbuf_put_varint(out, (uint64_t)e->deleted[i].level) &&
             kbuf_put_varint(out, e->deleted[i].number);
    for (size_t i = 0; i < e->nwal_ends; i++)
        ok = ok && kbuf_put_varint(out, TAG_WAL_END) &&
             kbuf_put_varint(out, e->wal_ends[i].number) && kbuf_put_varint(out, e->wal_ends[i].end);
    if (e->has_user_meta)
        ok = ok && kbuf_put_varint(out, TAG_USER_META) &&
             kbuf_put_lenbytes(out, e->user_meta.data, e->user_meta.len);
    for (size_t i = 0; i < e->nadded; i++) {
        const edit_file *f = &e->added[i];
        ok = ok && kbuf_put_varint(out, TAG_NEW_FILE) && kbuf_put_varint(out, (uint64_t)f->level) &&
             kbuf_put_varint(out, f->number) && kbuf_put_varint(out, f->file_size) &&
             kbuf_put_varint(out, f->entries) && kbuf_put_varint(out, f->min_seq) &&
             kbuf_put_varint(out, f->max_seq) &&
             kbuf_put_lenbytes(out, f->smallest.data, f->smallest.len) &&
             kbuf_put_lenbytes(out, f->largest.data, f->largest.len);
    }
    return ok ? KURA_OK : kura_err(KURA_E_NOMEM, "version edit: out of memory");
}

static const uint8_t *get_bytes(const uint8_t *p, const uint8_t *end, const uint8_t **b,
                                uint64_t *n)
{
    if (!(p = dec_varint64(p, end, n)) || *n > (uint64_t)(end - p) || *n < 8)
        return NULL;
    *b = p;
    return p + *n;
}

kura_status edit_decode(version_edit *e, const uint8_t *p, size_t len, const char *what)
{
    if (len == 0)
        return KURA_OK; /* an empty edit (p may be NULL) */
    const uint8_t *end = p + len;
    while (p < end) {
        uint64_t tag, level, v[6];
        const uint8_t *sk, *lk;
        uint64_t slen, llen;
        if (!(p = dec_varint64(p, end, &tag)))
            goto bad;
        switch (tag) {
        case TAG_LOG_NUMBER:
            if (!(p = dec_varint64(p, end, &e->log_number)))
                goto bad;
            e->has_log_number = true;
            break;
        case TAG_NEXT_FILE:
            if (!(p = dec_varint64(p, end, &e->next_file)))
                goto bad;
            e->has_next_file = true;
            break;
        case TAG_LAST_SEQ:
            if (!(p = dec_varint64(p, end, &e->last_seq)))
                goto bad;
            e->has_last_seq = true;
            break;
        case TAG_DELETED_FILE:
            if (!(p = dec_varint64(p, end, &level)) || level >= LSM_LEVELS ||
                !(p = dec_varint64(p, end, &v[0])))
                goto bad;
            if (edit_delete_file(e, (int)level, v[0]) != KURA_OK)
                return KURA_E_NOMEM;
            break;
        case TAG_NEW_FILE:
            if (!(p = dec_varint64(p, end, &level)) || level >= LSM_LEVELS)
                goto bad;
            for (int i = 0; i < 5; i++)
                if (!(p = dec_varint64(p, end, &v[i])))
                    goto bad;
            if (!(p = get_bytes(p, end, &sk, &slen)) || !(p = get_bytes(p, end, &lk, &llen)))
                goto bad;
            if (edit_add_file(e, (int)level, v[0], v[1], v[2], v[3], v[4], sk, slen, lk, llen) !=
                KURA_OK)
                return KURA_E_NOMEM;
            break;
        case TAG_WAL_END:
            if (!(p = dec_varint64(p, end, &v[0])) || !(p = dec_varint64(p, end, &v[1])))
                goto bad;
            if (edit_add_wal_end(e, v[0], v[1]) != KURA_OK)
                return KURA_E_NOMEM;
            break;
        case TAG_USER_META:
            if (!(p = dec_varint64(p, end, &v[0])) || v[0] > (uint64_t)(end - p))
                goto bad;
            if (edit_set_user_meta(e, p, (size_t)v[0]) != KURA_OK)
                return KURA_E_NOMEM;
            p += v[0];
            break;
        default:
            goto bad;
        }
    }
    return KURA_OK;
bad:
    return kura_err(KURA_E_CORRUPTION, "%s: malformed manifest record", what);
}
