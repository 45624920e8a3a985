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
 * the item map itself). val_check_encoded must agree with val_decode on every input, and
 * for an accepted item the JSON API's writer must print the same text (or fail the same way)
 * from the bytes (jw_item_encoded) as from the decoded value (jw_item). The seeds in
 * corpus/item_codec_fuzz/ are valid encodings of varied items.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "engine/model/value.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kura_value v = {0};
    kura_status s = val_decode(data, size, &v);
    FUZZ_CHECK(s, "val_decode", KURA_OK, KURA_E_CORRUPTION, KURA_E_NOMEM);
    kura_status checked = val_check_encoded(data, size);
    if (s != KURA_E_NOMEM && checked != s) abort();
    if (s != KURA_OK) {
        if (v.type != 0) abort(); /* outputs are set only on success */
        return 0;
    }
    if (v.type == KURA_M) {
        kbuf from_value = KBUF_INIT, from_bytes = KBUF_INIT;
        kura_status a = jw_item(&from_value, &v), b = jw_item_encoded(&from_bytes, data, size);
        if (a != KURA_E_NOMEM && b != KURA_E_NOMEM &&
            (a != b || (a == KURA_OK && (from_value.len != from_bytes.len ||
                                         memcmp(from_value.data, from_bytes.data,
                                                from_value.len) != 0))))
            abort();
        kbuf_free(&from_value);
        kbuf_free(&from_bytes);
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
