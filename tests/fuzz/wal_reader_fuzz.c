/*
 * wal_reader_fuzz.c - libFuzzer target: the WAL/MANIFEST log reader on arbitrary bytes.
 *
 * This file contains a fuzz target that stores the input as a log file and reads every
 * record back with wal_reader (wal/reader.h). Whatever the bytes, the reader must end with
 * one of the statuses its contract names (the end of the log, corruption, an I/O or memory
 * error) and must never read out of bounds; records it returns must be readable in full.
 * The seeds come from make_seeds.c (a valid log of a few records).
 */
#include <stdlib.h>

#include "tests/fuzz/fuzz_common.h"
#include "wal/reader.h"

/* Reads every byte of a returned record, so that ASan checks its whole extent. */
static uint8_t wal_fuzz_touch(const uint8_t *rec, size_t len)
{
    uint8_t x = 0;
    for (size_t i = 0; i < len; i++)
        x ^= rec[i];
    return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size);
    volatile uint8_t sink = 0;
    wal_reader *r;
    kura_status s;

    s = wal_reader_open(io_env_posix(), path, IO_KIND_WAL, &r);
    FUZZ_CHECK(s, "wal_reader_open", KURA_OK, KURA_E_IO, KURA_E_NOMEM, KURA_E_CORRUPTION);
    if (s != KURA_OK)
        return 0;
    for (;;) {
        const uint8_t *rec;
        size_t len;

        s = wal_reader_next(r, &rec, &len);
        FUZZ_CHECK(s, "wal_reader_next", KURA_OK, KURA_E_NOT_FOUND, KURA_E_CORRUPTION,
                   KURA_E_IO, KURA_E_NOMEM);
        if (s != KURA_OK)
            break;
        if (!rec || wal_reader_end_offset(r) > size ||
            wal_reader_record_offset(r) >= wal_reader_end_offset(r) ||
            len > wal_reader_end_offset(r) - wal_reader_record_offset(r))
            abort();
        sink ^= wal_fuzz_touch(rec, len);
    }
    /* The end (or error) is sticky: asking again must give the same answer. */
    {
        const uint8_t *rec;
        size_t len;
        if (wal_reader_next(r, &rec, &len) != s)
            abort();
    }
    wal_reader_close(r);
    (void)sink;
    return 0;
}
