/*
 * stream_ids.c - the names a change stream shows its consumers (stream.h, "Names"): stream
 * labels, shard ids and sequence numbers, and their parsing back. Each is exact: a parse
 * accepts only what the formatting produces.
 */
#include "engine/stream.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void stream_label(uint64_t ms, char out[STREAM_LABEL_LEN + 1])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char buf[64];
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof buf - n, ".%03u", (unsigned)(ms % 1000));
    size_t len = strlen(buf) < STREAM_LABEL_LEN ? strlen(buf) : STREAM_LABEL_LEN;
    memcpy(out, buf, len); /* (years of 4 digits: exactly STREAM_LABEL_LEN) */
    out[len] = 0;
}

/* n decimal digits at s into *out. */
static bool digits(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

bool stream_label_parse(const char *s, uint64_t *ms_out)
{
    uint64_t y, mo, d, h, mi, se, ms;
    if (strlen(s) != STREAM_LABEL_LEN || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
        s[13] != ':' || s[16] != ':' || s[19] != '.' || !digits(s, 4, &y) ||
        !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
        !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se) || !digits(s + 20, 3, &ms))
        return false;
    struct tm tm = {.tm_year = (int)y - 1900, .tm_mon = (int)mo - 1, .tm_mday = (int)d,
                    .tm_hour = (int)h, .tm_min = (int)mi, .tm_sec = (int)se};
    time_t secs = timegm(&tm);
    if (secs < 0)
        return false;
    uint64_t v = (uint64_t)secs * 1000 + ms;
    char back[STREAM_LABEL_LEN + 1];
    stream_label(v, back);
    if (strcmp(back, s)) /* e.g. February 30th */
        return false;
    *ms_out = v;
    return true;
}

void stream_shard_id(uint64_t label_ms, uint32_t part, char out[STREAM_SHARD_ID_LEN + 1])
{
    snprintf(out, STREAM_SHARD_ID_LEN + 1, "shardId-%020llu-%08x", (unsigned long long)label_ms,
             part);
}

bool stream_shard_parse(const char *s, uint64_t *label_ms_out, uint32_t *part_out)
{
    uint64_t ms = 0, part = 0;
    if (strlen(s) != STREAM_SHARD_ID_LEN || strncmp(s, "shardId-", 8) || s[28] != '-' ||
        !digits(s + 8, 20, &ms))
        return false;
    for (int i = 29; i < 37; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return false;
        part = part * 16 + (uint64_t)v;
    }
    *label_ms_out = ms;
    *part_out = (uint32_t)part;
    return true;
}

bool stream_seqnum(stream_pos p, char out[STREAM_SEQNUM_LEN + 1])
{
    if (p.segment >= 10000000000ull || p.offset >= 10000000000ull || p.index >= 100000u)
        return false;
    snprintf(out, STREAM_SEQNUM_LEN + 1, "%010llu%010llu%05u", (unsigned long long)p.segment,
             (unsigned long long)p.offset, p.index);
    return true;
}

bool stream_seqnum_parse(const char *s, stream_pos *out)
{
    uint64_t seg, off, idx;
    if (strlen(s) != STREAM_SEQNUM_LEN || !digits(s, 10, &seg) || !digits(s + 10, 10, &off) ||
        !digits(s + 20, 5, &idx))
        return false;
    *out = (stream_pos){seg, off, (uint32_t)idx};
    return true;
}
