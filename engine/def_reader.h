/*
 * def_reader.h - the reader of a table definition record's fields (docs/format/catalog.md):
 * varints, bytes, fixed 64-bit words and length-prefixed strings, each of which marks the
 * reader bad (and returns 0 / NULL) instead of reading past the record's end. Used by the
 * record's decoder (engine/table_def.c) and its version-6 settings section
 * (engine/table_settings.c). No state beyond the struct; a reader is used by one thread.
 */
#ifndef KURA_ENGINE_DEF_READER_H
#define KURA_ENGINE_DEF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct def_reader {
    const uint8_t *p, *end;
    bool bad;
} def_reader;

uint64_t def_rd_varint(def_reader *r);
uint8_t def_rd_u8(def_reader *r);
uint64_t def_rd_fixed64(def_reader *r);
/* A malloc'ed NUL-terminated copy of a length-prefixed string of min..max bytes (with
 * `no_nul`, one holding a NUL byte is bad); NULL when bad or out of memory (then bad too). */
char *def_rd_str(def_reader *r, size_t min, size_t max, bool no_nul);

#endif
