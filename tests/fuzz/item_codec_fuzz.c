/*
 * item_codec_fuzz.c - libFuzzer target: the binary item codec (engine/model/codec.c,
 * docs/format/item.md) on arbitrary bytes.
 *
 * This file contains a fuzz target that decodes the input as one encoded value. Whatever the
 * bytes, val_decode must return KURA_OK or KURA_E_CORRUPTION (or KURA_E_NOMEM) and never read
 * out of bounds or recurse without bound. A value it accepts must be canonical: re-encoding
 * gives back exactly the input bytes, decoding those again gives an equal value (also equal
 * to a deep copy), and the request checks and size functions run on it without failing
 * (val_validate may reject it only for nesting, which the codec allows one level deeper for
 * the item map itself). The seeds in corpus/item_codec_fuzz/ are valid encodings of varied
 * items.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kura_value v = {0};
    kura_status s = val_decode(data, size, &v);
    FUZZ_CHECK(s, "val_decode", KURA_OK, KURA_E_CORRUPTION, KURA_E_NOMEM);
    if (s != KURA_OK) {
        if (v.type != 0) abort(); /* outputs are set only on success */
        return 0;
    }

    kbuf enc = KBUF_INIT;
    s = val_encode(&v, &enc);
    FUZZ_CHECK(s, "val_encode", KURA_OK, KURA_E_NOMEM);
    if (s == KURA_OK && (enc.len != size || memcmp(enc.data, data, size) != 0)) abort();

    kura_value again = {0}, copy = {0};
    if (s == KURA_OK) {
        s = val_decode(enc.data, enc.len, &again);
        FUZZ_CHECK(s, "val_decode (again)", KURA_OK, KURA_E_NOMEM);
        if (s == KURA_OK && !val_equal(&v, &again)) abort();
    }
    if (val_copy(&copy, &v) == KURA_OK && !val_equal(&copy, &v)) abort();

    s = v.type == KURA_M ? val_validate_item(&v) : val_validate(&v);
    FUZZ_CHECK(s, "val_validate", KURA_OK, KURA_E_INVALID, KURA_E_NOMEM);
    if (s == KURA_E_INVALID && strncmp(kura_last_error(), "Nesting Levels", 14) != 0 &&
        strcmp(kura_last_error(), "Item size has exceeded the maximum allowed size") != 0)
        abort();
    volatile size_t sink = val_size(&v) + val_item_size(&v);
    (void)sink;

    val_clear(&copy);
    val_clear(&again);
    val_clear(&v);
    kbuf_free(&enc);
    return 0;
}
