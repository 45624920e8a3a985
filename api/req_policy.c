/*
 * req_policy.c - This file contains the resource-based policy operations of the JSON API:
 * PutResourcePolicy ({"ResourceArn", "Policy"[, "ExpectedRevisionId",
 * "ConfirmRemoveSelfResourceAccess"]} -> {"RevisionId"}), GetResourcePolicy ({"ResourceArn"}
 * -> {"Policy", "RevisionId"}) and DeleteResourcePolicy ({"ResourceArn"[,
 * "ExpectedRevisionId"]} -> {"RevisionId"}, or {} when the table had no policy). The schemas
 * hold the model's constraints (botocore's service-2.json: ResourceArnString 1..1283,
 * PolicyRevisionId 1..255, both required members not null); the engine (engine/
 * table_policy.c) checks the ARN, the document and the revision ids. kura has no IAM:
 * ConfirmRemoveSelfResourceAccess is accepted and changes nothing.
 */
#include <stdlib.h>

#include "api/api_int.h"

#define F_ARN                                                                                      \
    {                                                                                              \
        .name = "ResourceArn", .type = AT_STRING, .flags = AF_NOT_NULL, .min_len = 1,              \
        .max_len = 1283                                                                            \
    }
#define F_EXPECTED                                                                                 \
    {                                                                                              \
        .name = "ExpectedRevisionId", .type = AT_STRING, .flags = 0, .min_len = 1, .max_len = 255  \
    }

static const api_field put_schema[] = {
    F_ARN,      {.name = "Policy", .type = AT_STRING, .flags = AF_NOT_NULL},
    F_EXPECTED, API_F_BOOL("ConfirmRemoveSelfResourceAccess"),
    API_F_END,
};

static kura_status run_put(api_call *c)
{
    char *rev = NULL;
    kura_status s =
        arn_put_resource_policy(c->db, &c->scope, api_str(c->req, "ResourceArn"), api_str(c->req, "Policy"),
                                 api_str(c->req, "ExpectedRevisionId"), &rev);
    if (s != KURA_OK) return api_engine(s);
    s = api_out_json(c, "RevisionId", jd_string(c->doc, rev));
    kura_free(rev);
    return s;
}

static const api_field get_schema[] = {F_ARN, API_F_END};

static kura_status run_get(api_call *c)
{
    char *policy = NULL, *rev = NULL;
    kura_status s = arn_get_resource_policy(c->db, &c->scope, api_str(c->req, "ResourceArn"), &policy, &rev);
    if (s != KURA_OK) return api_engine(s);
    s = api_out_json(c, "Policy", jd_string(c->doc, policy));
    if (s == KURA_OK) s = api_out_json(c, "RevisionId", jd_string(c->doc, rev));
    kura_free(policy);
    kura_free(rev);
    return s;
}

static const api_field delete_schema[] = {F_ARN, F_EXPECTED, API_F_END};

static kura_status run_delete(api_call *c)
{
    char *rev = NULL;
    kura_status s = arn_delete_resource_policy(c->db, &c->scope, api_str(c->req, "ResourceArn"),
                                                api_str(c->req, "ExpectedRevisionId"), &rev);
    if (s != KURA_OK) return api_engine(s);
    if (rev) s = api_out_json(c, "RevisionId", jd_string(c->doc, rev));
    kura_free(rev);
    return s;
}

const api_op api_op_put_resource_policy = {"PutResourcePolicy", put_schema, run_put};
const api_op api_op_get_resource_policy = {"GetResourcePolicy", get_schema, run_get};
const api_op api_op_delete_resource_policy = {"DeleteResourcePolicy", delete_schema, run_delete};
