/*
 * This file contains the sliding window of per-second units (engine/heat_window.h): a ring of
 * one-second slots stamped with their second, reset lazily when a later second reuses them.
 */
#include "engine/heat_window.h"

void heat_window_init(heat_window *w)
{
    w->since = INT64_MIN;
    for (int i = 0; i < HEAT_WINDOW_S; i++)
        w->slot[i] = (heat_slot){.sec = INT64_MIN, .rd = 0, .wr = 0};
}

void heat_window_restart(heat_window *w, int64_t now_ms)
{
    int64_t sec = now_ms / 1000;
    w->since = sec;
    w->slot[sec % HEAT_WINDOW_S] = (heat_slot){.sec = sec, .rd = 0, .wr = 0};
}

bool heat_window_add(heat_window *w, int64_t now_ms, uint64_t rd, uint64_t wr)
{
    int64_t sec = now_ms / 1000;
    if (sec < w->since)
        return false;
    heat_slot *s = &w->slot[sec % HEAT_WINDOW_S];
    if (s->sec != sec) {
        /* A slot stamped later than sec holds a second HEAT_WINDOW_S or more ahead: this
         * record is outside every window, and resetting would lose the newer second. */
        if (s->sec > sec)
            return false;
        *s = (heat_slot){.sec = sec, .rd = 0, .wr = 0};
    }
    s->rd += rd;
    s->wr += wr;
    return true;
}

/* The slots of the last `secs` seconds at now_ms, folded: summed, or their largest (`peak`). */
static void fold(const heat_window *w, int64_t now_ms, uint32_t secs, bool peak,
                 uint64_t *rd_out, uint64_t *wr_out)
{
    if (secs < 1)
        secs = 1;
    if (secs > HEAT_WINDOW_S)
        secs = HEAT_WINDOW_S;
    int64_t now_s = now_ms / 1000;
    uint64_t rd = 0, wr = 0;
    for (int i = 0; i < HEAT_WINDOW_S; i++) {
        const heat_slot *s = &w->slot[i];
        if (s->sec > now_s || s->sec <= now_s - (int64_t)secs || s->sec < w->since)
            continue;
        rd = peak ? (s->rd > rd ? s->rd : rd) : rd + s->rd;
        wr = peak ? (s->wr > wr ? s->wr : wr) : wr + s->wr;
    }
    *rd_out = rd;
    *wr_out = wr;
}

void heat_window_sum(const heat_window *w, int64_t now_ms, uint32_t secs, uint64_t *rd_out,
                     uint64_t *wr_out)
{
    fold(w, now_ms, secs, false, rd_out, wr_out);
}

void heat_window_peak(const heat_window *w, int64_t now_ms, uint32_t secs, uint64_t *rd_out,
                      uint64_t *wr_out)
{
    fold(w, now_ms, secs, true, rd_out, wr_out);
}
