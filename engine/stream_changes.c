/*
 * stream_changes.c - turning a table's WAL record into the changes its stream records
 * (stream.h). The batch is walked once: a meta entry sets the time and the origin of what
 * follows, a put or delete waits for its image, and the pair becomes a change or nothing.
 */
#include "engine/stream.h"

#include <string.h>

#include "engine/lsm/batch.h"
#include "engine/model/value.h"
#include "util/coding.h"
#include "util/ikey.h"
#include "util/status.h"

typedef struct walk {
    const char *what;
    stream_change_fn fn;
    void *arg;
    uint64_t time_ms;
    bool service;
    uint32_t index;
    bool pending; /* a write waits for its image */
    stream_change c;
} walk;

/* Whether two encoded items are equal as DynamoDB compares them. */
static kura_status same_item(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                             const char *what, bool *same_out)
{
    if (alen == blen && !memcmp(a, b, alen)) {
        *same_out = true; /* the encoding is canonical but for the order of set members */
        return KURA_OK;
    }
    kura_value x = {0}, y = {0};
    kura_status s = val_decode(a, alen, &x);
    if (s == KURA_OK)
        s = val_decode(b, blen, &y);
    if (s != KURA_OK)
        s = kura_err(s, "%s: %s", what, kura_last_error());
    *same_out = s == KURA_OK && val_equal(&x, &y);
    val_clear(&x);
    val_clear(&y);
    return s;
}

/* The pending write, its old image `old` (empty: none) now known. */
static kura_status emit(walk *w, const uint8_t *old, size_t olen)
{
    stream_change *c = &w->c;
    w->pending = false;
    c->old_enc = olen ? old : NULL;
    c->old_len = olen;
    if (!c->new_enc && !olen)
        return KURA_OK; /* a delete of nothing */
    if (c->new_enc && olen) {
        bool same = false;
        kura_status s = same_item(c->new_enc, c->new_len, old, olen, w->what, &same);
        if (s != KURA_OK || same)
            return s; /* a put that changed nothing */
    }
    c->event = !c->new_enc ? STREAM_REMOVE : olen ? STREAM_MODIFY : STREAM_INSERT;
    c->time_ms = w->time_ms;
    c->service = w->service;
    return w->fn(w->arg, c);
}

static kura_status entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key, size_t klen,
                         const uint8_t *val, size_t vlen)
{
    walk *w = arg;
    uint32_t index = w->index++;
    if (type == LSM_BATCH_TXN)
        return KURA_OK;
    if (type == LSM_BATCH_META) {
        if (w->pending)
            goto no_image;
        w->time_ms = dec_fixed64(val);
        w->service = (val[8] & LSM_META_SERVICE) != 0;
        return KURA_OK;
    }
    if (type == LSM_BATCH_IMAGE) {
        if (!w->pending || w->c.klen != klen || memcmp(w->c.key, key, klen))
            return kura_err(KURA_E_CORRUPTION, "%s: an image at sequence %llu follows no write "
                                               "of its item",
                            w->what, (unsigned long long)seq);
        return emit(w, val, vlen);
    }
    if (w->pending)
        goto no_image;
    w->pending = true;
    w->c = (stream_change){.seq = seq, .index = index, .key = key, .klen = klen};
    if (type == IKEY_TYPE_VALUE) {
        w->c.new_enc = val;
        w->c.new_len = vlen;
    }
    return KURA_OK;
no_image:
    return kura_err(KURA_E_CORRUPTION, "%s: the write at sequence %llu has no image", w->what,
                    (unsigned long long)w->c.seq);
}

kura_status stream_changes(const uint8_t *rep, size_t len, const char *what, stream_change_fn fn,
                           void *arg)
{
    walk w = {.what = what, .fn = fn, .arg = arg};
    kura_status s = lsm_rep_iterate(rep, len, entry, &w, what);
    if (s == KURA_OK && w.pending)
        s = kura_err(KURA_E_CORRUPTION, "%s: the write at sequence %llu has no image", what,
                     (unsigned long long)w.c.seq);
    return s;
}
