/*
 * number.h - DynamoDB's N type: an exact decimal number of at most 38 significant digits whose
 * magnitude is zero or lies in [1e-130, 9.9999999999999999999999999999999999999e+125].
 *
 * A kura_num is a plain value (no heap memory, copy it freely). Every function here is pure:
 * no I/O, no global state except the per-thread error message set through kura_err(), so all of
 * them are safe to call from any thread on distinct outputs.
 *
 * Errors: functions that can fail return KURA_OK or a kura_status and leave their outputs
 * untouched on failure; the message (kura_last_error()) is the one DynamoDB returns.
 */
#ifndef KURA_MODEL_NUMBER_H
#define KURA_MODEL_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

/* Most significant digits a number may have. */
#define NUM_DIGITS_MAX 38
/* Range of kura_num.exp for non-zero numbers (value = 0.d1d2... x 10^exp): 0.1e-129 == 1e-130
 * is the smallest magnitude, 0.99..9e126 the largest. */
#define NUM_EXP_MIN (-129)
#define NUM_EXP_MAX 126
/* Bytes num_format() needs, including the terminating NUL: the longest output is a negative
 * 38-digit number at the smallest exponent, "-0." + 129 zeros + 38 digits (170 chars). */
#define NUM_FORMAT_MAX 171
/* Most bytes num_key_encode() writes: class byte, 2 exponent bytes, 19 digit pairs, terminator. */
#define NUM_KEY_MAX 23

/* The canonical form of a number: ndigits == 0 means zero (then neg is false and exp is 0);
 * otherwise digits[0] != 0, digits[ndigits - 1] != 0, every digit is 0..9, exp is in
 * [NUM_EXP_MIN, NUM_EXP_MAX], and the value is (neg ? -1 : 1) * 0.d1d2...dn * 10^exp.
 * Every function below takes and returns canonical numbers only, so equal values have equal
 * representations (memcmp of two canonical kura_num structs zeroed before filling is equality). */
typedef struct kura_num {
    bool neg;
    int32_t exp;
    uint8_t ndigits;
    uint8_t digits[NUM_DIGITS_MAX];
} kura_num;

/* Parses the `len` bytes at `s` (not NUL-terminated necessarily) into *out.
 * Syntax: [+-]? digits [. digits]? ([eE] [+-]? digits)?, where the mantissa may also be written
 * "5." or ".5" but must contain at least one digit; no spaces, hex, inf or nan. Leading and
 * trailing zeros are not significant ("1.50" == "1.5", "-0" == "0").
 * Returns KURA_E_INVALID with, checked in this order:
 *   "The parameter cannot be converted to a numeric value: <input>"   bad syntax (input cut
 *                                                       at 200 bytes)
 *   "Number overflow. Attempting to store a number with magnitude larger than supported range"
 *   "Number underflow. Attempting to store a number with magnitude smaller than supported range"
 *   "Attempting to store more than 38 significant digits in a Number"
 * On failure *out is unchanged. */
kura_status num_parse(const char *s, size_t len, kura_num *out);

/* Writes the canonical decimal string of `n` as DynamoDB returns it, never in exponent notation
 * ("12.5", "-0.001", "100", "0"), NUL-terminated, into `buf`; `cap` must be at least
 * NUM_FORMAT_MAX. Returns the length excluding the NUL. */
size_t num_format(const kura_num *n, char *buf, size_t cap);

/* Numeric order: negative, zero or positive as a < b, a == b, a > b. */
int num_cmp(const kura_num *a, const kura_num *b);

/* *out = a + b (num_add) or a - b (num_sub), computed exactly. `out` may alias `a` or `b`.
 * Returns KURA_E_INVALID with the overflow / underflow / 38-digit message of num_parse() when
 * the exact result is out of range or needs more than 38 significant digits (DynamoDB does not
 * round); *out is then unchanged. */
kura_status num_add(const kura_num *a, const kura_num *b, kura_num *out);
kura_status num_sub(const kura_num *a, const kura_num *b, kura_num *out);

/* Order-preserving, prefix-free key encoding (docs/format/keys.md): memcmp order of two
 * encodings is the numeric order of the numbers, and no encoding is a prefix of another, so
 * encodings can be concatenated with other key parts. Writes at most NUM_KEY_MAX bytes to
 * `out` and returns how many. */
size_t num_key_encode(const kura_num *n, uint8_t *out);

/* Decodes one encoding from the start of the `len` bytes at `p` (which may continue with other
 * data) into *out and sets *used_out to its length. Returns KURA_E_CORRUPTION ("number key:
 * ...") if the bytes are truncated or are not the encoding of a canonical number; the caller
 * adds the file and offset. Outputs are set only on success. */
kura_status num_key_decode(const uint8_t *p, size_t len, kura_num *out, size_t *used_out);

#endif
