/*
 * number.c - This file contains DynamoDB's exact decimal number (N): parsing, canonical
 * formatting, comparison, exact addition and subtraction, and the order-preserving key encoding.
 *
 * A number is kept as sign, decimal exponent and up to 38 digits, value = +-0.d1d2...dn x 10^exp,
 * with no leading or trailing zero digit, so every value has exactly one representation.
 * Arithmetic lines both operands up in a digit array indexed by power of ten (at most
 * 38 + (126 - -129) + 1 positions), adds or subtracts magnitudes, and re-canonicalizes; the
 * result is never rounded - one that needs more than 38 digits is an error, as in DynamoDB.
 *
 * Key encoding (docs/format/keys.md, "numbers"):
 *
 *   zero       0x02
 *   positive   0x03, BE16(exp + 0x8000), pair..., 0x00
 *   negative   0x01, then the positive encoding of |n| after its class byte, every byte
 *              complemented (so the terminator is 0xFF)
 *
 * where the digits are packed two per byte, pair = d1 * 10 + d2 + 1 (1..100, never 0), an odd
 * last digit padded with d2 = 0. Why it sorts: the class byte orders signs; for positives a
 * larger exponent means a larger magnitude (digits[0] != 0), and at equal exponents the pairs
 * compare like the digit strings, with the 0x00 terminator below every pair so a shorter digit
 * string (a prefix) sorts first. Complementing reverses that order for negatives. It is
 * prefix-free because the exponent is fixed-width and the digit pairs end at the first 0x00
 * (resp. 0xFF), which no pair byte can equal.
 */
#include "engine/model/number.h"

#include <assert.h>
#include <string.h>

#define NUM_MSG_DIGITS "Attempting to store more than 38 significant digits in a Number"
#define NUM_MSG_OVERFLOW                                                                           \
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
#define NUM_MSG_UNDERFLOW                                                                          \
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"

/* Exponents in the input are saturated here: anything beyond is out of range anyway, and the
 * saturation keeps the int64 arithmetic below from overflowing for any input length. */
#define NUM_EXP_CLAMP 1000000000LL

/* Checks a non-zero result's exponent and digit count, in DynamoDB's message order. */
static kura_status num_check(int64_t exp, size_t ndigits)
{
    if (exp > NUM_EXP_MAX) return kura_err(KURA_E_INVALID, NUM_MSG_OVERFLOW);
    if (exp < NUM_EXP_MIN) return kura_err(KURA_E_INVALID, NUM_MSG_UNDERFLOW);
    if (ndigits > NUM_DIGITS_MAX) return kura_err(KURA_E_INVALID, NUM_MSG_DIGITS);
    return KURA_OK;
}

static kura_status num_bad_syntax(const char *s, size_t len)
{
    int shown = len > 200 ? 200 : (int)len;
    return kura_err(KURA_E_INVALID, "The parameter cannot be converted to a numeric value: %.*s",
                    shown, s);
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses the optional exponent suffix at s[i..len) into *e (saturated); false on bad syntax. */
static bool parse_exponent(const char *s, size_t i, size_t len, int64_t *e)
{
    if (i == len) {
        *e = 0;
        return true;
    }
    if (s[i] != 'e' && s[i] != 'E') return false;
    i++;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == len) return false;
    int64_t v = 0;
    for (; i < len; i++) {
        if (!is_digit(s[i])) return false;
        v = v * 10 + (s[i] - '0');
        if (v > NUM_EXP_CLAMP) v = NUM_EXP_CLAMP;
    }
    *e = neg ? -v : v;
    return true;
}

kura_status num_parse(const char *s, size_t len, kura_num *out)
{
    kura_num n;
    memset(&n, 0, sizeof n);
    size_t i = 0;
    if (i < len && (s[i] == '+' || s[i] == '-')) n.neg = s[i++] == '-';

    /* Mantissa: `pos` counts mantissa digits seen, `point` how many preceded the '.'. The first
     * non-zero digit at mantissa index f has weight 10^(point - 1 - f), so exp = point - f. */
    int64_t pos = 0, point = -1, first = -1, last = -1;
    for (; i < len; i++) {
        if (s[i] == '.' && point < 0) {
            point = pos;
            continue;
        }
        if (!is_digit(s[i])) break;
        if (s[i] != '0') {
            if (first < 0) first = pos;
            last = pos;
            if (pos - first < NUM_DIGITS_MAX) n.digits[pos - first] = (uint8_t)(s[i] - '0');
        }
        pos++;
    }
    int64_t e;
    if (pos == 0 || !parse_exponent(s, i, len, &e)) return num_bad_syntax(s, len);
    if (point < 0) point = pos;
    if (first < 0) { /* zero, whatever its sign and exponent */
        memset(out, 0, sizeof *out);
        return KURA_OK;
    }
    int64_t exp = point - first + e;
    int64_t ndigits = last - first + 1;
    kura_status st = num_check(exp, (size_t)ndigits);
    if (st != KURA_OK) return st;
    /* Zeros between significant digits were skipped by the loop: the array was zeroed. */
    n.exp = (int32_t)exp;
    n.ndigits = (uint8_t)ndigits;
    *out = n;
    return KURA_OK;
}

size_t num_format(const kura_num *n, char *buf, size_t cap)
{
    assert(cap >= NUM_FORMAT_MAX);
    (void)cap;
    size_t k = 0;
    if (n->ndigits == 0) {
        buf[k++] = '0';
        buf[k] = '\0';
        return k;
    }
    if (n->neg) buf[k++] = '-';
    if (n->exp <= 0) {
        buf[k++] = '0';
        buf[k++] = '.';
        for (int32_t z = 0; z < -n->exp; z++)
            buf[k++] = '0';
        for (int d = 0; d < n->ndigits; d++)
            buf[k++] = (char)('0' + n->digits[d]);
    } else {
        for (int32_t d = 0; d < n->exp || d < n->ndigits; d++) {
            if (d == n->exp) buf[k++] = '.';
            buf[k++] = d < n->ndigits ? (char)('0' + n->digits[d]) : '0';
        }
    }
    buf[k] = '\0';
    return k;
}

/* Compares magnitudes of two non-zero numbers. */
static int num_cmp_abs(const kura_num *a, const kura_num *b)
{
    if (a->exp != b->exp) return a->exp < b->exp ? -1 : 1;
    int n = a->ndigits < b->ndigits ? a->ndigits : b->ndigits;
    for (int i = 0; i < n; i++)
        if (a->digits[i] != b->digits[i]) return a->digits[i] < b->digits[i] ? -1 : 1;
    return (a->ndigits > b->ndigits) - (a->ndigits < b->ndigits);
}

/* -1, 0 or 1 by sign. */
static int num_sign(const kura_num *n)
{
    return n->ndigits == 0 ? 0 : n->neg ? -1 : 1;
}

int num_cmp(const kura_num *a, const kura_num *b)
{
    int sa = num_sign(a), sb = num_sign(b);
    if (sa != sb) return sa < sb ? -1 : 1;
    if (sa == 0) return 0;
    int c = num_cmp_abs(a, b);
    return sa < 0 ? -c : c;
}

/* Digit positions of the aligned arithmetic: power of ten p lives at index p - NUM_POW_MIN.
 * The lowest power in use is NUM_EXP_MIN - NUM_DIGITS_MAX, the highest NUM_EXP_MAX (a carry). */
#define NUM_POW_MIN (NUM_EXP_MIN - NUM_DIGITS_MAX)
#define NUM_POW_SPAN (NUM_EXP_MAX - NUM_POW_MIN + 1)

/* Adds (sign +1) or subtracts (sign -1) the digits of `n` into the aligned array `acc`. */
static void num_accumulate(int8_t *acc, const kura_num *n, int sign)
{
    for (int i = 0; i < n->ndigits; i++)
        acc[n->exp - 1 - i - NUM_POW_MIN] += (int8_t)(sign * n->digits[i]);
}

/* |big| + |small| (sign +1) or |big| - |small| (sign -1, |big| >= |small|) with the sign of
 * `big`: the magnitudes are lined up, combined, carries/borrows propagated, and the result
 * stripped of leading and trailing zeros and checked. */
static kura_status num_combine(const kura_num *big, const kura_num *small, int sign, kura_num *out)
{
    int8_t acc[NUM_POW_SPAN];
    memset(acc, 0, sizeof acc);
    num_accumulate(acc, big, 1);
    num_accumulate(acc, small, sign);
    for (int i = 0; i + 1 < NUM_POW_SPAN; i++) { /* index 0 is the lowest power */
        if (acc[i] < 0) {
            acc[i] += 10;
            acc[i + 1]--;
        } else if (acc[i] > 9) {
            acc[i] -= 10;
            acc[i + 1]++;
        }
    }
    int hi = NUM_POW_SPAN - 1, lo = 0;
    while (hi >= 0 && acc[hi] == 0)
        hi--;
    if (hi < 0) {
        memset(out, 0, sizeof *out);
        return KURA_OK;
    }
    while (acc[lo] == 0)
        lo++;
    int64_t exp = (int64_t)hi + NUM_POW_MIN + 1;
    kura_status st = num_check(exp, (size_t)(hi - lo + 1));
    if (st != KURA_OK) return st;
    kura_num r;
    memset(&r, 0, sizeof r);
    r.neg = big->neg;
    r.exp = (int32_t)exp;
    r.ndigits = (uint8_t)(hi - lo + 1);
    for (int i = hi; i >= lo; i--)
        r.digits[hi - i] = (uint8_t)acc[i];
    *out = r;
    return KURA_OK;
}

kura_status num_add(const kura_num *a, const kura_num *b, kura_num *out)
{
    if (b->ndigits == 0) {
        *out = *a;
        return KURA_OK;
    }
    if (a->ndigits == 0) {
        *out = *b;
        return KURA_OK;
    }
    if (a->neg == b->neg) return num_combine(a, b, 1, out);
    if (num_cmp_abs(a, b) >= 0) return num_combine(a, b, -1, out);
    return num_combine(b, a, -1, out);
}

kura_status num_sub(const kura_num *a, const kura_num *b, kura_num *out)
{
    kura_num nb = *b;
    if (nb.ndigits != 0) nb.neg = !nb.neg;
    return num_add(a, &nb, out);
}

size_t num_key_encode(const kura_num *n, uint8_t *out)
{
    if (n->ndigits == 0) {
        out[0] = 0x02;
        return 1;
    }
    uint8_t mask = n->neg ? 0xFF : 0x00;
    size_t k = 0;
    out[k++] = n->neg ? 0x01 : 0x03;
    uint16_t be = (uint16_t)(n->exp + 0x8000);
    out[k++] = (uint8_t)((be >> 8) ^ mask);
    out[k++] = (uint8_t)((be & 0xFF) ^ mask);
    for (int i = 0; i < n->ndigits; i += 2) {
        int d2 = i + 1 < n->ndigits ? n->digits[i + 1] : 0;
        out[k++] = (uint8_t)((n->digits[i] * 10 + d2 + 1) ^ mask);
    }
    out[k++] = mask; /* terminator 0x00, complemented for negatives */
    return k;
}

static kura_status num_key_corrupt(const char *why)
{
    return kura_err(KURA_E_CORRUPTION, "number key: %s", why);
}

kura_status num_key_decode(const uint8_t *p, size_t len, kura_num *out, size_t *used_out)
{
    if (len == 0) return num_key_corrupt("empty");
    kura_num n;
    memset(&n, 0, sizeof n);
    if (p[0] == 0x02) {
        *out = n;
        *used_out = 1;
        return KURA_OK;
    }
    if (p[0] != 0x01 && p[0] != 0x03) return num_key_corrupt("bad class byte");
    n.neg = p[0] == 0x01;
    uint8_t mask = n.neg ? 0xFF : 0x00;
    if (len < 3) return num_key_corrupt("truncated exponent");
    int32_t exp = (int32_t)(((unsigned)(p[1] ^ mask) << 8) | (unsigned)(p[2] ^ mask)) - 0x8000;
    if (exp < NUM_EXP_MIN || exp > NUM_EXP_MAX) return num_key_corrupt("exponent out of range");
    n.exp = exp;
    size_t k = 3;
    int nd = 0;
    for (;; k++) {
        if (k == len) return num_key_corrupt("missing terminator");
        uint8_t b = p[k] ^ mask;
        if (b == 0) break;
        if (b > 100 || nd + 2 > NUM_DIGITS_MAX) return num_key_corrupt("bad digit pair");
        n.digits[nd++] = (uint8_t)((b - 1) / 10);
        n.digits[nd++] = (uint8_t)((b - 1) % 10);
    }
    if (nd > 0 && n.digits[nd - 1] == 0) nd--; /* an odd digit count was padded with a zero */
    if (nd == 0 || n.digits[0] == 0 || n.digits[nd - 1] == 0)
        return num_key_corrupt("digits not canonical");
    n.ndigits = (uint8_t)nd;
    *out = n;
    *used_out = k + 1;
    return KURA_OK;
}
