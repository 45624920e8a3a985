/*
 * req_policy.c - This file contains the resource-based policy operations of the JSON API:
 * PutResourcePolicy ({"ResourceArn", "Policy"[, "ExpectedRevisionId",
 * "ConfirmRemoveSelfResourceAccess"]} -> {"RevisionId"}), GetResourcePolicy ({"ResourceArn"}
 * -> {"Policy", "RevisionId"}) and DeleteResourcePolicy ({"ResourceArn"[,
 * "ExpectedRevisionId"]} -> {"RevisionId"}, or {} when the table had no policy). The model's
 * constraints are checked by api/validate.c (ResourceArnString 1..1283, PolicyRevisionId
 * 1..255, both required members not null); the engine (engine/
 * table_policy.c) checks the ARN, the document and the revision ids. kura has no IAM:
 * ConfirmRemoveSelfResourceAccess is accepted and changes nothing.
 */
#include <stdlib.h>

#include "api/api_int.h"

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

const api_op api_op_put_resource_policy = {"PutResourcePolicy", run_put};
const api_op api_op_get_resource_policy = {"GetResourcePolicy", run_get};
const api_op api_op_delete_resource_policy = {"DeleteResourcePolicy", run_delete};
