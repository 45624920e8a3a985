/*
 * api_tags_test.c - tests of tags (engine/table_tags.c, api/req_tags.c): TagResource,
 * UntagResource and ListTagsOfResource through kura_execute and the C API, CreateTable's Tags,
 * DynamoDB's rules with their exact messages (the model's lengths at 'tags.N.member.key', the
 * pattern, the aws: prefix, 50 tags, malformed and unknown ARNs, empty lists), a key replacing
 * its value, paging with NextToken, durability across a reopen (definition version 5, with and
 * without a stream), and a table deleted and created again without its old tags.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#define API_JSON_DIR "api_tags"
#include "api_json_util.h"

#define ARN "arn:aws:dynamodb:us-east-1:000000000000:table/"

static void create(const char *name, const char *extra)
{
    char body[4096];
    snprintf(body, sizeof body,
             "{\"TableName\":\"%s\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
             "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
             "\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"%s%s}",
             name, *extra ? "," : "", extra);
    json_decref(ok("CreateTable", body));
}

/* The table's tags as "k=v,k=v" (key order), compared with `want`. */
static void expect_tags(const char *table, const char *want)
{
    char body[512], got[8192] = "";
    snprintf(body, sizeof body, "{\"ResourceArn\":\"" ARN "%s\"}", table);
    json_t *j = ok("ListTagsOfResource", body);
    json_t *tags = json_object_get(j, "Tags");
    assert_true(json_is_array(tags)); /* present also when empty */
    assert_null(json_object_get(j, "NextToken"));
    for (size_t i = 0; i < json_array_size(tags); i++) {
        json_t *t = json_array_get(tags, i);
        size_t n = strlen(got);
        snprintf(got + n, sizeof got - n, "%s%s=%s", i ? "," : "",
                 json_string_value(json_object_get(t, "Key")),
                 json_string_value(json_object_get(t, "Value")));
    }
    if (strcmp(got, want) != 0) fail_msg("tags of %s\n  got      %s\n  expected %s", table, got, want);
    json_decref(j);
}

static void tag(const char *table, const char *tags_json)
{
    char body[8192];
    snprintf(body, sizeof body, "{\"ResourceArn\":\"" ARN "%s\",\"Tags\":%s}", table, tags_json);
    json_t *j = ok("TagResource", body);
    assert_int_equal(json_object_size(j), 0);
    json_decref(j);
}

static void test_tag_untag_list(void **state)
{
    (void)state;
    create("tg1", "");
    expect_tags("tg1", "");
    tag("tg1", "[{\"Key\":\"b\",\"Value\":\"2\"},{\"Key\":\"a\",\"Value\":\"\"}]");
    expect_tags("tg1", "a=,b=2");
    tag("tg1", "[{\"Key\":\"a\",\"Value\":\"new\"}]"); /* an existing key: the value replaced */
    expect_tags("tg1", "a=new,b=2");
    json_decref(ok("UntagResource", "{\"ResourceArn\":\"" ARN "tg1\",\"TagKeys\":[\"b\",\"zz\"]}"));
    expect_tags("tg1", "a=new");
    /* CreateTable's Tags */
    create("tg2", "\"Tags\":[{\"Key\":\"env\",\"Value\":\"prod\"},{\"Key\":\"x y:/=+-@._\","
                  "\"Value\":\"\xc3\xa9t\xc3\xa9\"}]");
    expect_tags("tg2", "env=prod,x y:/=+-@._=\xc3\xa9t\xc3\xa9");
}

static void test_errors(void **state)
{
    (void)state;
    create("tg3", "");
    const char *inv = "ValidationException";
    err("TagResource", "{\"ResourceArn\":\"nonsense\",\"Tags\":[{\"Key\":\"a\",\"Value\":\"b\"}]}",
        inv, "Invalid TableArn: Invalid ResourceArn provided as input nonsense");
    err("ListTagsOfResource", "{\"ResourceArn\":\"arn:aws:dynamodb:r:12:table/a/b\"}", inv,
        "Invalid TableArn: Invalid ResourceArn provided as input arn:aws:dynamodb:r:12:table/a/b");
    err("ListTagsOfResource", "{}", inv, "1 validation error detected: Value null at "
                                         "'resourceArn' failed to satisfy constraint: Member must "
                                         "not be null");
    err("ListTagsOfResource", "{\"ResourceArn\":\"" ARN "nope\"}", "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: " ARN "nope not found");
    err("UntagResource",
        "{\"ResourceArn\":\"arn:aws:dynamodb:eu-west-1:123456789012:table/tg3\",\"TagKeys\":[\"a\"]}",
        "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: "
        "arn:aws:dynamodb:eu-west-1:123456789012:table/tg3 not found");
    err("TagResource", "{\"ResourceArn\":\"" ARN "tg3\",\"Tags\":[]}", inv,
        "Atleast one Tag needs to be provided as Input.");
    err("TagResource", "{\"ResourceArn\":\"" ARN "tg3\"}", inv,
        "1 validation error detected: Value null at 'tags' failed to satisfy constraint: "
        "Member must not be null");
    err("UntagResource", "{\"ResourceArn\":\"" ARN "tg3\",\"TagKeys\":[]}", inv,
        "Atleast one Tag Key needs to be provided as Input.");
    char k129[130], v257[258], body[1024], msg[1024];
    memset(k129, 'k', 129);
    k129[129] = 0;
    memset(v257, 'v', 257);
    v257[257] = 0;
    snprintf(body, sizeof body, "{\"ResourceArn\":\"" ARN "tg3\",\"Tags\":[{\"Key\":\"ok\","
             "\"Value\":\"1\"},{\"Key\":\"%s\",\"Value\":\"1\"}]}", k129);
    snprintf(msg, sizeof msg, "1 validation error detected: Value '%s' at 'tags.2.member.key' "
             "failed to satisfy constraint: Member must have length less than or equal to 128",
             k129);
    err("TagResource", body, inv, msg);
    snprintf(body, sizeof body, "{\"ResourceArn\":\"" ARN "tg3\",\"Tags\":[{\"Key\":\"k\","
             "\"Value\":\"%s\"}]}", v257);
    snprintf(msg, sizeof msg, "1 validation error detected: Value '%s' at 'tags.1.member.value' "
             "failed to satisfy constraint: Member must have length less than or equal to 256",
             v257);
    err("TagResource", body, inv, msg);
    err("TagResource", "{\"ResourceArn\":\"" ARN "tg3\",\"Tags\":[{\"Key\":\"\",\"Value\":\"\"}]}",
        inv, "1 validation error detected: Value '' at 'tags.1.member.key' failed to satisfy "
             "constraint: Member must have length greater than or equal to 1");
    err("TagResource", "{\"ResourceArn\":\"" ARN "tg3\",\"Tags\":[{\"Key\":\"a*b\",\"Value\":\"\"}]}",
        inv, "1 validation error detected: Value 'a*b' at 'tags.1.member.key' failed to satisfy "
             "constraint: Member must satisfy regular expression pattern: "
             "[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*");
    /* Unicode by general category: a currency symbol (Sc) and an emoji (So) are not of the
     * pattern; letters, numbers and separators of any script are */
    const char *const refused[] = {"\u20ac1", "ok\U0001F600"}; /* €1, ok😀 */
    const char *const shown[] = {"\xe2\x82\xac" "1", "ok\xf0\x9f\x98\x80"};
    for (int i = 0; i < 2; i++) {
        snprintf(body, sizeof body, "{\"ResourceArn\":\"" ARN "tg3\",\"Tags\":[{\"Key\":\"k\","
                 "\"Value\":\"%s\"}]}", refused[i]);
        snprintf(msg, sizeof msg, "1 validation error detected: Value '%s' at "
                 "'tags.1.member.value' failed to satisfy constraint: Member must satisfy "
                 "regular expression pattern: [\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*", shown[i]);
        err("TagResource", body, inv, msg);
    }
    err("TagResource", "{\"ResourceArn\":\"" ARN "tg3\",\"Tags\":[{\"Key\":\"aws:x\",\"Value\":\"\"}]}",
        inv, "One or more parameter values were invalid: Tag keys starting with the aws: prefix "
             "are reserved for AWS use: aws:x");
    /* CreateTable checks its Tags the same way, and creates nothing when they fail */
    err("CreateTable",
        "{\"TableName\":\"tg4\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
        "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
        "\"BillingMode\":\"PAY_PER_REQUEST\",\"Tags\":[{\"Key\":\"aws:x\",\"Value\":\"\"}]}",
        inv, "One or more parameter values were invalid: Tag keys starting with the aws: prefix "
             "are reserved for AWS use: aws:x");
    err("ListTagsOfResource", "{\"ResourceArn\":\"" ARN "tg4\"}", "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: " ARN "tg4 not found");
    expect_tags("tg3", ""); /* nothing applied by the refused requests */
    /* é (Ll), 日本 (Lo), ٣ (Nd), U+2028 (Zl), U+3000 (Zs) */
    tag("tg3", "[{\"Key\":\"\u00e9\u65e5\u672c\u0663\",\"Value\":\"a\u2028b\u3000c\"}]");
    expect_tags("tg3", "\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac\xd9\xa3=a\xe2\x80\xa8" "b\xe3\x80\x80" "c");
}

/* 50 tags are allowed; a 51st (by TagResource or in one request) is refused, and nothing of
 * the refused request is applied. */
static void test_limit(void **state)
{
    (void)state;
    create("tg5", "");
    char list[4096] = "[";
    for (int i = 0; i < 50; i++) {
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s{\"Key\":\"k%02d\",\"Value\":\"v\"}", i ? "," : "", i);
    }
    strcat(list, "]");
    tag("tg5", list);
    tag("tg5", "[{\"Key\":\"k00\",\"Value\":\"again\"}]"); /* a replacement: still 50 */
    const char *limit = "One or more parameter values were invalid: The number of tags exceeds "
                        "the limit of 50";
    err("TagResource", "{\"ResourceArn\":\"" ARN "tg5\",\"Tags\":[{\"Key\":\"k50\",\"Value\":\"\"}]}",
        "ValidationException", limit);
    kura_tag_list l;
    assert_kura_ok(kura_list_tags_of_resource(db, ARN "tg5", NULL, 0, &l));
    assert_int_equal(l.count, 50);
    assert_string_equal(l.tags[0].value, "again");
    assert_null(l.next_token);
    kura_tag_list_free(&l);
    /* paging through the C API: 20 + 20 + 10 */
    size_t total = 0, pages = 0;
    char *token = NULL;
    do {
        assert_kura_ok(kura_list_tags_of_resource(db, ARN "tg5", token, 20, &l));
        free(token);
        token = l.next_token ? strdup(l.next_token) : NULL;
        total += l.count;
        pages++;
        kura_tag_list_free(&l);
    } while (token);
    assert_int_equal(total, 50);
    assert_int_equal(pages, 3);
    /* NextToken over JSON: the tags after the token's key */
    json_t *j = ok("ListTagsOfResource", "{\"ResourceArn\":\"" ARN "tg5\",\"NextToken\":\"k47\"}");
    assert_int_equal(json_array_size(json_object_get(j, "Tags")), 2);
    json_decref(j);
}

static void test_durable(void **state)
{
    (void)state;
    create("tg6", "");
    tag("tg6", "[{\"Key\":\"a\",\"Value\":\"1\"},{\"Key\":\"b\",\"Value\":\"2\"}]");
    create("tg7", "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":\"KEYS_ONLY\"},"
                  "\"Tags\":[{\"Key\":\"s\",\"Value\":\"1\"}]");
    json_decref(ok("UpdateTimeToLive", "{\"TableName\":\"tg6\",\"TimeToLiveSpecification\":"
                                       "{\"Enabled\":true,\"AttributeName\":\"ttl\"}}"));
    reopen();
    expect_tags("tg6", "a=1,b=2");
    expect_tags("tg7", "s=1");
    json_t *d = ok("DescribeTable", "{\"TableName\":\"tg7\"}");
    assert_non_null(json_object_get(json_object_get(d, "Table"), "LatestStreamArn"));
    json_decref(d);
    d = ok("DescribeTimeToLive", "{\"TableName\":\"tg6\"}");
    assert_non_null(json_object_get(json_object_get(d, "TimeToLiveDescription"), "AttributeName"));
    json_decref(d);
    json_decref(ok("UntagResource", "{\"ResourceArn\":\"" ARN "tg6\",\"TagKeys\":[\"a\",\"b\"]}"));
    reopen();
    expect_tags("tg6", "");
    /* DeleteTable takes the tags with it */
    json_decref(ok("DeleteTable", "{\"TableName\":\"tg7\"}"));
    create("tg7", "");
    expect_tags("tg7", "");
    reopen();
    expect_tags("tg7", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_untag_list),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_durable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
