/*
 * stream_ids_test.c - the change stream's names (engine/stream_ids.c): labels as DynamoDB
 * writes them, shard ids and sequence numbers, each parsed back exactly and nothing else
 * accepted; sequence numbers ordered as the positions they name.
 */
#include "testutil.h"

#include <string.h>

#include "engine/stream.h"

static void test_labels(void **state)
{
    (void)state;
    char l[STREAM_LABEL_LEN + 1];
    stream_label(1431379293291ull, l); /* DynamoDB's documentation's example */
    assert_string_equal(l, "2015-05-11T21:21:33.291");
    uint64_t ms = 0;
    assert_true(stream_label_parse(l, &ms));
    assert_int_equal(ms, 1431379293291ull);
    stream_label(0, l);
    assert_string_equal(l, "1970-01-01T00:00:00.000");
    const char *bad[] = {"2015-05-11T21:21:33.29", "2015-05-11 21:21:33.291",
                         "2015-02-30T21:21:33.291", "2015-05-11T21:21:33.2910",
                         "2015-05-11T21:61:33.291", "x015-05-11T21:21:33.291", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(stream_label_parse(bad[i], &ms));
}

static void test_shard_ids(void **state)
{
    (void)state;
    char id[STREAM_SHARD_ID_LEN + 1];
    stream_shard_id(1795743480123ull, 3, id);
    assert_string_equal(id, "shardId-00000001795743480123-00000003");
    uint64_t ms;
    uint32_t part;
    assert_true(stream_shard_parse(id, &ms, &part));
    assert_int_equal(ms, 1795743480123ull);
    assert_int_equal(part, 3);
    stream_shard_id(1, 0xabcdef01u, id);
    assert_true(stream_shard_parse(id, &ms, &part));
    assert_int_equal(part, 0xabcdef01u);
    const char *bad[] = {"shardId-00000001795743480123-0000003",
                         "shardid-00000001795743480123-00000003",
                         "shardId-0000000179574348012x-00000003",
                         "shardId-00000001795743480123-0000000G",
                         "shardId-00000001795743480123_00000003"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(stream_shard_parse(bad[i], &ms, &part));
}

static void test_sequence_numbers(void **state)
{
    (void)state;
    stream_pos ps[] = {{1, 0, 0}, {1, 0, 1}, {1, 40, 0}, {1, 32768, 99999}, {2, 0, 0},
                       {9999999999ull, 4294967295ull, 5}};
    char prev[STREAM_SEQNUM_LEN + 1] = "";
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        char s[STREAM_SEQNUM_LEN + 1];
        assert_true(stream_seqnum(ps[i], s));
        assert_int_equal(strlen(s), 25);
        assert_true(strcmp(prev, s) < 0); /* the positions' order */
        stream_pos back;
        assert_true(stream_seqnum_parse(s, &back));
        assert_int_equal(back.segment, ps[i].segment);
        assert_int_equal(back.offset, ps[i].offset);
        assert_int_equal(back.index, ps[i].index);
        memcpy(prev, s, sizeof s);
    }
    char s[STREAM_SEQNUM_LEN + 1];
    assert_false(stream_seqnum((stream_pos){10000000000ull, 0, 0}, s));
    assert_false(stream_seqnum((stream_pos){1, 0, 100000}, s));
    stream_pos p;
    assert_false(stream_seqnum_parse("000000000100000000000000", &p));  /* 24 digits */
    assert_false(stream_seqnum_parse("00000000010000000000000000", &p)); /* 26 */
    assert_false(stream_seqnum_parse("0000000001000000000000a00", &p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_shard_ids),
        cmocka_unit_test(test_sequence_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
