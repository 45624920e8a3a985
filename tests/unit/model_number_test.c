/*
 * model_number_test.c - DynamoDB numbers (engine/model/number.c): parsing and canonical
 * formatting, every error and its message, the 38-digit and range edges, comparison, exact
 * addition/subtraction, and a seeded property test of the order-preserving key encoding.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "engine/model/number.h"

static kura_num parse_ok(const char *s)
{
    kura_num n;
    kura_status st = num_parse(s, strlen(s), &n);
    if (st != KURA_OK)
        fail_msg("num_parse(\"%s\") returned %s: %s", s, kura_status_str(st), kura_last_error());
    return n;
}

static void check_format(const char *in, const char *want)
{
    kura_num n = parse_ok(in);
    char buf[NUM_FORMAT_MAX];
    size_t len = num_format(&n, buf, sizeof buf);
    if (strcmp(buf, want) != 0 || len != strlen(want))
        fail_msg("\"%s\" formatted as \"%s\" (len %zu), expected \"%s\"", in, buf, len, want);
    /* the canonical string parses back to the same number */
    kura_num back = parse_ok(buf);
    assert_int_equal(num_cmp(&n, &back), 0);
    assert_memory_equal(&n, &back, sizeof n);
}

static void check_error(const char *in, const char *want_msg)
{
    kura_num n;
    memset(&n, 0x5a, sizeof n);
    kura_num before = n;
    assert_kura_status(num_parse(in, strlen(in), &n), KURA_E_INVALID);
    if (strcmp(kura_last_error(), want_msg) != 0)
        fail_msg("num_parse(\"%s\") message \"%s\", expected \"%s\"", in, kura_last_error(),
                 want_msg);
    assert_memory_equal(&n, &before, sizeof n); /* out untouched on failure */
}

#define MSG_DIGITS "Attempting to store more than 38 significant digits in a Number"
#define MSG_OVER                                                                                   \
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
#define MSG_UNDER                                                                                  \
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"

static void test_canonical_forms(void **state)
{
    (void)state;
    check_format("1.50", "1.5");
    check_format("-0", "0");
    check_format("+0", "0");
    check_format("0.000", "0");
    check_format("-0.0e-999", "0");
    check_format("0e999999999999999999", "0");
    check_format("1e2", "100");
    check_format("12E-3", "0.012");
    check_format("+5", "5");
    check_format("00012.3400", "12.34");
    check_format("-12.5", "-12.5");
    check_format("-0.001", "-0.001");
    check_format("100", "100");
    check_format("5.", "5");
    check_format(".5", "0.5");
    check_format("1.0203e+2", "102.03");
    check_format("1001", "1001");
    check_format("123456789012345678901234567890.12345678",
                 "123456789012345678901234567890.12345678");
    check_format("0.1e1", "1");
    check_format("-7e0", "-7");

    kura_num n = parse_ok("-0012.3400e1");
    assert_true(n.neg);
    assert_int_equal(n.exp, 3);
    assert_int_equal(n.ndigits, 4);
    assert_int_equal(n.digits[0], 1);
    assert_int_equal(n.digits[3], 4);
    kura_num z = parse_ok("-0.00");
    assert_false(z.neg);
    assert_int_equal(z.ndigits, 0);
    assert_int_equal(z.exp, 0);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    const char *bad[] = {"",      "-",   "+",     ".",    "-.",    "e5",   "1e",  "1e+", "1e-",
                         "1.2.3", " 1",  "1 ",    "0x10", "inf",   "-inf", "nan", "NaN", "1,5",
                         "--1",   "+-1", "1e5.5", "1ee5", "1e5e5", "abc",  "1a",  "١"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[256];
        snprintf(want, sizeof want, "The parameter cannot be converted to a numeric value: %s",
                 bad[i]);
        check_error(bad[i], want);
    }
    /* a length-delimited input: the byte after `len` is not read */
    kura_num n;
    assert_kura_ok(num_parse("12x", 2, &n));
    char buf[NUM_FORMAT_MAX];
    num_format(&n, buf, sizeof buf);
    assert_string_equal(buf, "12");
}

static void test_digit_limit(void **state)
{
    (void)state;
    char s[256];
    memset(s, '9', 38);
    s[38] = '\0';
    check_format(s, s);                                                 /* 38 nines */
    check_error("123456789012345678901234567890123456789", MSG_DIGITS); /* 39 */
    check_error("1.00000000000000000000000000000000000001", MSG_DIGITS);
    check_error("0.000123456789012345678901234567890123456789", MSG_DIGITS);
    /* 1e39 written out: 1 followed by 39 zeros has one significant digit */
    s[0] = '1';
    memset(s + 1, '0', 39);
    s[40] = '\0';
    check_format(s, s);
    /* leading zeros don't count either */
    check_format("0000000000000000000000000000000000000000001.5", "1.5");
    check_format("1.0000000000000000000000000000000000000000000000", "1");
    check_format("12345678901234567890123456789012345678e-20",
                 "123456789012345678.90123456789012345678");
}

static void test_range_limits(void **state)
{
    (void)state;
    char want[NUM_FORMAT_MAX];
    /* 1e-130 written out: "0." + 129 zeros + "1" */
    size_t k = 0;
    want[k++] = '0';
    want[k++] = '.';
    for (int i = 0; i < 129; i++)
        want[k++] = '0';
    want[k++] = '1';
    want[k] = '\0';
    check_format("1e-130", want);
    check_format(want, want);
    check_error("1e-131", MSG_UNDER);
    check_error("-0.99e-130", MSG_UNDER);
    check_error("1e-999999999999999999999", MSG_UNDER);
    char neg[NUM_FORMAT_MAX];
    neg[0] = '-';
    memcpy(neg + 1, want, k + 1);
    check_format("-1e-130", neg);

    kura_num max = parse_ok("9.9999999999999999999999999999999999999e125");
    assert_int_equal(max.exp, NUM_EXP_MAX);
    assert_int_equal(max.ndigits, 38);
    check_format("1e125", "1"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "0000000000"
                          "00000");
    check_error("1e126", MSG_OVER);
    check_error("-1e126", MSG_OVER);
    check_error("10e125", MSG_OVER);
    check_error("0.1e127", MSG_OVER);
    kura_num same = parse_ok("99.999999999999999999999999999999999999e124");
    assert_memory_equal(&same, &max, sizeof max);
    /* the range is checked before the digit count */
    check_error("1234567890123456789012345678901234567890e200", MSG_OVER);
    check_error("1e999999999999999999999999", MSG_OVER);

    /* the longest formatted number fits NUM_FORMAT_MAX */
    kura_num longest = parse_ok("-1.2345678901234567890123456789012345678e-130");
    char buf[NUM_FORMAT_MAX];
    size_t len = num_format(&longest, buf, sizeof buf);
    assert_int_equal(len, NUM_FORMAT_MAX - 1);
    assert_int_equal(strlen(buf), len);
    kura_num back = parse_ok(buf);
    assert_int_equal(num_cmp(&back, &longest), 0);
}

static void test_cmp(void **state)
{
    (void)state;
    const char *asc[] = {"-1e125",
                         "-100",
                         "-99.5",
                         "-10",
                         "-1.5",
                         "-1",
                         "-0.5",
                         "-1e-130",
                         "0",
                         "1e-130",
                         "0.001",
                         "0.0011",
                         "0.01",
                         "0.5",
                         "1",
                         "1.05",
                         "1.5",
                         "10",
                         "10.000000000000000000000000000000000001",
                         "11",
                         "1e125",
                         "9.9999999999999999999999999999999999999e125"};
    size_t n = sizeof asc / sizeof asc[0];
    for (size_t i = 0; i < n; i++) {
        kura_num a = parse_ok(asc[i]);
        for (size_t j = 0; j < n; j++) {
            kura_num b = parse_ok(asc[j]);
            int c = num_cmp(&a, &b);
            int want = (i > j) - (i < j);
            if ((c > 0) - (c < 0) != want)
                fail_msg("num_cmp(%s, %s) = %d, expected sign %d", asc[i], asc[j], c, want);
        }
    }
    kura_num x = parse_ok("1.50"), y = parse_ok("15e-1"), nz = parse_ok("-0"), z = parse_ok("0");
    assert_int_equal(num_cmp(&x, &y), 0);
    assert_int_equal(num_cmp(&nz, &z), 0);
}

static void check_arith(const char *a, char op, const char *b, const char *want)
{
    kura_num x = parse_ok(a), y = parse_ok(b), r;
    kura_status st = op == '+' ? num_add(&x, &y, &r) : num_sub(&x, &y, &r);
    if (st != KURA_OK)
        fail_msg("%s %c %s returned %s: %s", a, op, b, kura_status_str(st), kura_last_error());
    char buf[NUM_FORMAT_MAX];
    num_format(&r, buf, sizeof buf);
    if (strcmp(buf, want) != 0) fail_msg("%s %c %s = %s, expected %s", a, op, b, buf, want);
    /* aliasing the output with an input gives the same result */
    kura_num alias = x;
    assert_kura_ok(op == '+' ? num_add(&alias, &y, &alias) : num_sub(&alias, &y, &alias));
    assert_memory_equal(&alias, &r, sizeof r);
}

static void check_arith_error(const char *a, char op, const char *b, const char *msg)
{
    kura_num x = parse_ok(a), y = parse_ok(b), r;
    memset(&r, 0x33, sizeof r);
    kura_num before = r;
    assert_kura_status(op == '+' ? num_add(&x, &y, &r) : num_sub(&x, &y, &r), KURA_E_INVALID);
    if (strcmp(kura_last_error(), msg) != 0)
        fail_msg("%s %c %s: message \"%s\", expected \"%s\"", a, op, b, kura_last_error(), msg);
    assert_memory_equal(&r, &before, sizeof r);
}

static void test_add_sub(void **state)
{
    (void)state;
    check_arith("1", '+', "2", "3");
    check_arith("0", '+', "0", "0");
    check_arith("0", '-', "5", "-5");
    check_arith("-5", '+', "0", "-5");
    check_arith("9", '+', "1", "10");
    check_arith("999.99", '+', "0.01", "1000");
    check_arith("99999999999999999999999999999999999999", '+', "1",
                "100000000000000000000000000000000000000");
    check_arith("1000", '-', "0.001", "999.999");
    check_arith("1.5", '-', "1.5", "0");
    check_arith("-1.5", '+', "1.50", "0");
    check_arith("2", '-', "3", "-1");
    check_arith("-2", '-', "-3", "1");
    check_arith("-2", '-', "3", "-5");
    check_arith("1e10", '+', "1e-10", "10000000000.0000000001");
    check_arith("1e-130", '+', "1e-130",
                "0."
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "0000000000"
                "000000000"
                "2");
    check_arith("1.0000000000000000000000000000000000001", '-', "1",
                "0.0000000000000000000000000000000000001");
    check_arith("12345678901234567890123456789012345678", '-',
                "12345678901234567890123456789012345677", "1");
    char max[NUM_FORMAT_MAX]; /* 38 nines and 88 zeros */
    memset(max, '9', 38);
    memset(max + 38, '0', 88);
    max[126] = '\0';
    check_arith("5e125", '+', "4.9999999999999999999999999999999999999e125", max);
    check_arith(max, '-', "9.9999999999999999999999999999999999999e125", "0");
    check_arith("100", '-', "99.99", "0.01");

    check_arith_error("1e100", '+', "1e-100", MSG_DIGITS);
    check_arith_error("99999999999999999999999999999999999999", '+', "0.1", MSG_DIGITS);
    check_arith_error("9.9999999999999999999999999999999999999e125", '+', "1e88", MSG_OVER);
    check_arith_error("-9e125", '-', "1e125", MSG_OVER);
    check_arith_error("1.1e-130", '-', "1e-130", MSG_UNDER);
}

/* A random canonical number: varied lengths, often sharing exponents and digit prefixes so
 * that equal exponents and prefix digit strings are exercised. */
static kura_num random_num(uint64_t *rng)
{
    kura_num n;
    memset(&n, 0, sizeof n);
    uint64_t r = test_rand(rng);
    if (r % 50 == 0) return n;
    n.neg = (r >> 8) & 1;
    bool narrow = (r >> 9) & 1;
    n.exp = narrow ? (int32_t)((r >> 16) % 5) - 2
                   : NUM_EXP_MIN + (int32_t)((r >> 16) % (NUM_EXP_MAX - NUM_EXP_MIN + 1));
    n.ndigits = (uint8_t)(1 + (r >> 32) % (narrow ? 4 : NUM_DIGITS_MAX));
    for (int i = 0; i < n.ndigits; i++)
        n.digits[i] = (uint8_t)(test_rand(rng) % (narrow ? 3 : 10));
    if (n.digits[0] == 0) n.digits[0] = 1;
    while (n.digits[n.ndigits - 1] == 0)
        n.ndigits--;
    return n;
}

static void check_not_prefix(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    if (la < lb && memcmp(a, b, la) == 0)
        fail_msg("an encoding of %zu bytes is a prefix of one of %zu bytes", la, lb);
}

/* n * 10^6 as an integer, for numbers whose last digit is at 10^-6 or above and whose
 * magnitude is below 10^max_exp: an independent oracle for add/sub. */
static bool small_scaled(const kura_num *n, int max_exp, int64_t *out)
{
    if (n->exp - n->ndigits < -6 || n->exp > max_exp) return false;
    int64_t v = 0;
    for (int i = 0; i < n->ndigits; i++) {
        int64_t d = n->digits[i];
        for (int p = 0; p < n->exp - 1 - i + 6; p++)
            d *= 10;
        v += d;
    }
    *out = n->neg ? -v : v;
    return true;
}

/* Checks a + b and a - b against integer arithmetic when both are small (below 10^8, so the
 * result is below 2 * 10^8: its exponent may be one more). */
static void check_small_arith(const kura_num *a, const kura_num *b)
{
    int64_t va, vb, vr;
    if (!small_scaled(a, 8, &va) || !small_scaled(b, 8, &vb)) return;
    kura_num r;
    assert_kura_ok(num_add(a, b, &r));
    assert_true(small_scaled(&r, 9, &vr));
    assert_int_equal(vr, va + vb);
    assert_kura_ok(num_sub(a, b, &r));
    assert_true(small_scaled(&r, 9, &vr));
    assert_int_equal(vr, va - vb);
}

static void test_key_property(void **state)
{
    (void)state;
    uint64_t seed = test_seed(), rng = seed;
    for (int iter = 0; iter < 100000; iter++) {
        kura_num a = random_num(&rng), b = random_num(&rng);
        uint8_t ka[NUM_KEY_MAX + 4], kb[NUM_KEY_MAX + 4];
        size_t la = num_key_encode(&a, ka), lb = num_key_encode(&b, kb);
        assert_in_range(la, 1, NUM_KEY_MAX);
        size_t m = la < lb ? la : lb;
        int c = memcmp(ka, kb, m);
        if (c == 0) c = (la > lb) - (la < lb);
        int want = num_cmp(&a, &b);
        if ((c > 0) - (c < 0) != (want > 0) - (want < 0)) {
            char sa[NUM_FORMAT_MAX], sb[NUM_FORMAT_MAX];
            num_format(&a, sa, sizeof sa);
            num_format(&b, sb, sizeof sb);
            fail_msg("seed %llu: key order %d but num_cmp(%s, %s) = %d", (unsigned long long)seed,
                     c, sa, sb, want);
        }
        check_not_prefix(ka, la, kb, lb);
        check_not_prefix(kb, lb, ka, la);
        /* decode from a buffer that continues with other bytes */
        memset(ka + la, iter & 0xFF, 4);
        kura_num back;
        size_t used = 0;
        assert_kura_ok(num_key_decode(ka, la + 4, &back, &used));
        assert_int_equal(used, la);
        assert_memory_equal(&back, &a, sizeof a);
        if (iter % 10 == 0) { /* format -> parse round trip */
            char s[NUM_FORMAT_MAX];
            size_t len = num_format(&a, s, sizeof s);
            kura_num p;
            assert_kura_ok(num_parse(s, len, &p));
            assert_memory_equal(&p, &a, sizeof a);
        }
        check_small_arith(&a, &b);
        if (iter % 4 == 0) { /* (a + b) - b == a and a + b == b + a whenever a + b fits */
            kura_num s1, s2, d;
            if (num_add(&a, &b, &s1) == KURA_OK) {
                assert_kura_ok(num_add(&b, &a, &s2));
                assert_memory_equal(&s1, &s2, sizeof s1);
                assert_kura_ok(num_sub(&s1, &b, &d));
                assert_memory_equal(&d, &a, sizeof a);
            }
        }
    }
}

static void test_key_decode_errors(void **state)
{
    (void)state;
    kura_num n;
    size_t used = 99;
    uint8_t k[NUM_KEY_MAX] = {0};
    assert_kura_status(num_key_decode(k, 0, &n, &used), KURA_E_CORRUPTION);
    const uint8_t bad_class[] = {0x04};
    assert_kura_status(num_key_decode(bad_class, 1, &n, &used), KURA_E_CORRUPTION);
    kura_num x = parse_ok("-123.45");
    size_t len = num_key_encode(&x, k);
    for (size_t cut = 1; cut < len; cut++) /* every truncation is detected */
        assert_kura_status(num_key_decode(k, cut, &n, &used), KURA_E_CORRUPTION);
    assert_int_equal(used, 99);
    const uint8_t pair_too_big[] = {0x03, 0x80, 0x01, 101, 0x00};
    assert_kura_status(num_key_decode(pair_too_big, 5, &n, &used), KURA_E_CORRUPTION);
    const uint8_t leading_zero[] = {0x03, 0x80, 0x01, 2, 0x00}; /* digits "01" */
    assert_kura_status(num_key_decode(leading_zero, 5, &n, &used), KURA_E_CORRUPTION);
    const uint8_t trailing_zeros[] = {0x03, 0x80, 0x01, 11, 1, 0x00}; /* digits "1000" */
    assert_kura_status(num_key_decode(trailing_zeros, 6, &n, &used), KURA_E_CORRUPTION);
    const uint8_t no_digits[] = {0x03, 0x80, 0x01, 0x00};
    assert_kura_status(num_key_decode(no_digits, 4, &n, &used), KURA_E_CORRUPTION);
    const uint8_t exp_range[] = {0x03, 0x80, 0x7F, 11, 0x00}; /* exp 127 */
    assert_kura_status(num_key_decode(exp_range, 5, &n, &used), KURA_E_CORRUPTION);
    uint8_t long_digits[32] = {0x03, 0x80, 0x01};
    memset(long_digits + 3, 12, 20); /* 40 digits */
    long_digits[23] = 0x00;
    assert_kura_status(num_key_decode(long_digits, 24, &n, &used), KURA_E_CORRUPTION);
    const uint8_t zero[] = {0x02, 0x77};
    assert_kura_ok(num_key_decode(zero, 2, &n, &used));
    assert_int_equal(used, 1);
    assert_int_equal(n.ndigits, 0);
    /* the documented bytes of 12.5 and -12.5 */
    x = parse_ok("12.5");
    len = num_key_encode(&x, k);
    const uint8_t want_pos[] = {0x03, 0x80, 0x02, 13, 51, 0x00};
    assert_int_equal(len, sizeof want_pos);
    assert_memory_equal(k, want_pos, len);
    x = parse_ok("-12.5");
    len = num_key_encode(&x, k);
    const uint8_t want_neg[] = {0x01, 0x7F, 0xFD, 0xF2, 0xCC, 0xFF};
    assert_int_equal(len, sizeof want_neg);
    assert_memory_equal(k, want_neg, len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_forms),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_digit_limit),
        cmocka_unit_test(test_range_limits),
        cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_add_sub),
        cmocka_unit_test(test_key_property),
        cmocka_unit_test(test_key_decode_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
