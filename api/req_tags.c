/*
 * req_tags.c - This file contains the tag operations of the JSON API: TagResource
 * ({"ResourceArn", "Tags": [{"Key", "Value"}]}), UntagResource ({"ResourceArn", "TagKeys"}),
 * both answered with {}, and ListTagsOfResource ({"ResourceArn"[, "NextToken"]}, answered with
 * {"Tags": [...]} - the list also when empty, as DynamoDB Local and dynalite answer - and
 * "NextToken" when more follow), plus the decoding of CreateTable's Tags (api_tags_decode).
 * The model's constraints are api/validate.c's (TagKeyString 1..128, TagValueString 0..256,
 * ResourceArnString 1..1283); the engine (engine/table_tags.c) makes
 * DynamoDB's other checks: the ARN, the pattern, the aws: prefix, the 50 tags.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

kura_status api_tags_decode(const jd_t *list, kura_tag **out, size_t *n_out)
{
    size_t n = jd_array_size(list);
    kura_tag *v = calloc(n + 1, sizeof *v);
    if (!v) return API_NOMEM();
    for (size_t i = 0; i < n; i++) {
        v[i].key = api_str(jd_array_get(list, i), "Key");
        v[i].value = api_str(jd_array_get(list, i), "Value");
    }
    *out = v;
    *n_out = n;
    return KURA_OK;
}

/* ---- TagResource, UntagResource ------------------------------------------------------------- */

static kura_status run_tag(api_call *c)
{
    kura_tag *tags;
    size_t n;
    kura_status s = api_tags_decode(jd_object_get(c->req, "Tags"), &tags, &n);
    if (s != KURA_OK) return s;
    s = api_engine(arn_tag_resource(c->db, &c->scope, api_str(c->req, "ResourceArn"), tags, n));
    free(tags);
    return s;
}

static kura_status run_untag(api_call *c)
{
    const jd_t *list = jd_object_get(c->req, "TagKeys");
    size_t n = jd_array_size(list);
    const char **keys = calloc(n + 1, sizeof *keys);
    if (!keys) return API_NOMEM();
    for (size_t i = 0; i < n; i++)
        keys[i] = jd_string_value(jd_array_get(list, i));
    kura_status s = api_engine(arn_untag_resource(c->db, &c->scope, api_str(c->req, "ResourceArn"), keys, n));
    free(keys);
    return s;
}

/* ---- ListTagsOfResource ------------------------------------------------------------------- */

static kura_status run_list(api_call *c)
{
    kura_tag_list l;
    kura_status s = arn_list_tags_of_resource(c->db, &c->scope, api_str(c->req, "ResourceArn"),
                                               api_str(c->req, "NextToken"), 0, &l);
    if (s != KURA_OK) return api_engine(s);
    jd_t *arr = jd_array(c->doc);
    for (size_t i = 0; arr && i < l.count; i++) {
        jd_t *o = jd_object(c->doc);
        if (!o || jd_object_set(o, "Key", jd_string(c->doc, l.tags[i].key)) != 0 ||
            jd_object_set(o, "Value", jd_string(c->doc, l.tags[i].value)) != 0 ||
            jd_array_append(arr, o) != 0)
            arr = NULL;
    }
    s = arr ? api_out_json(c, "Tags", arr) : API_NOMEM();
    if (s == KURA_OK && l.next_token)
        s = api_out_json(c, "NextToken", jd_string(c->doc, l.next_token));
    kura_tag_list_free(&l);
    return s;
}

const api_op api_op_tag_resource = {"TagResource", run_tag};
const api_op api_op_untag_resource = {"UntagResource", run_untag};
const api_op api_op_list_tags_of_resource = {"ListTagsOfResource", run_list};
