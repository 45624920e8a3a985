/*
 * req_insights.c - This file contains the Contributor Insights operations of the JSON API:
 * UpdateContributorInsights ({"TableName", "IndexName"?, "ContributorInsightsAction",
 * "ContributorInsightsMode"?}, answered with {"TableName", "IndexName"?,
 * "ContributorInsightsStatus", "ContributorInsightsMode"?}), DescribeContributorInsights
 * ({"TableName", "IndexName"?}, answered with the rule list, the status, LastUpdateDateTime
 * and the mode) and ListContributorInsights ({"TableName"?, "NextToken"?, "MaxResults"?},
 * answered with {"ContributorInsightsSummaries": [...], "NextToken"?}). The model's
 * constraints (names, the enums, MaxResults <= 100) are api/validate.c's; the engine
 * (engine/table_insights.c) keeps the setting. Members the C API leaves unset are left out,
 * as DynamoDB leaves them out.
 */
#include <string.h>

#include "api/api_int.h"

static kura_contributor_insights_mode decode_mode(const char *s)
{
    if (s && !strcmp(s, "THROTTLED_KEYS")) return KURA_CI_MODE_THROTTLED_KEYS;
    if (s && !strcmp(s, "ACCESSED_AND_THROTTLED_KEYS"))
        return KURA_CI_MODE_ACCESSED_AND_THROTTLED_KEYS;
    return KURA_CI_MODE_UNSET;
}

/* TableName, IndexName (when set), ContributorInsightsStatus and ContributorInsightsMode (when
 * set) into o; false when out of memory. */
static bool put_summary(jd_doc *doc, jd_t *o, const char *table, const char *index,
                        const char *status, kura_contributor_insights_mode mode)
{
    const char *m = kura_contributor_insights_mode_name(mode);
    return jd_object_set(o, "TableName", jd_string(doc, table)) == 0 &&
           (!index || jd_object_set(o, "IndexName", jd_string(doc, index)) == 0) &&
           jd_object_set(o, "ContributorInsightsStatus", jd_string(doc, status)) == 0 &&
           (!m || jd_object_set(o, "ContributorInsightsMode", jd_string(doc, m)) == 0);
}

/* Writes the members of object o into the response, in order. */
static kura_status out_members(api_call *c, jd_t *o)
{
    kura_status s = KURA_OK;
    const char *key;
    jd_t *v;
    jd_object_foreach(o, key, v) {
        if (s == KURA_OK) s = api_out_json(c, key, v);
    }
    return s;
}

static kura_status run_update(api_call *c)
{
    const char *action = api_str(c->req, "ContributorInsightsAction"); /* required (model) */
    kura_update_contributor_insights_req req = {
        .index_name = api_str(c->req, "IndexName"),
        .action = action && !strcmp(action, "DISABLE") ? KURA_CI_DISABLE : KURA_CI_ENABLE,
        .mode = decode_mode(api_str(c->req, "ContributorInsightsMode")),
    };
    kura_status s = api_table_member(c, c->req, &req.table_name);
    if (s != KURA_OK) return s;
    kura_contributor_insights_description d;
    if ((s = kura_update_contributor_insights(c->db, &req, &d)) != KURA_OK) return api_engine(s);
    jd_t *o = jd_object(c->doc);
    bool ok = o && put_summary(c->doc, o, d.table_name, d.index_name, d.status, d.mode);
    kura_contributor_insights_description_free(&d);
    return ok ? out_members(c, o) : API_NOMEM();
}

static kura_status run_describe(api_call *c)
{
    const char *table = NULL;
    kura_status s = api_table_member(c, c->req, &table);
    if (s != KURA_OK) return s;
    kura_contributor_insights_description d;
    s = kura_describe_contributor_insights(c->db, table, api_str(c->req, "IndexName"), &d);
    if (s != KURA_OK) return api_engine(s);
    jd_t *o = jd_object(c->doc), *rules = d.rule_count ? jd_array(c->doc) : NULL;
    bool ok = o && (!d.rule_count || rules);
    for (size_t i = 0; ok && i < d.rule_count; i++)
        ok = jd_array_append(rules, jd_string(c->doc, d.rules[i])) == 0;
    const char *m = kura_contributor_insights_mode_name(d.mode);
    ok = ok && jd_object_set(o, "TableName", jd_string(c->doc, d.table_name)) == 0 &&
         (!d.index_name || jd_object_set(o, "IndexName", jd_string(c->doc, d.index_name)) == 0) &&
         (!rules || jd_object_set(o, "ContributorInsightsRuleList", rules) == 0) &&
         jd_object_set(o, "ContributorInsightsStatus", jd_string(c->doc, d.status)) == 0 &&
         (!d.last_update ||
          jd_object_set(o, "LastUpdateDateTime", jd_real(c->doc, d.last_update)) == 0) &&
         (!m || jd_object_set(o, "ContributorInsightsMode", jd_string(c->doc, m)) == 0);
    kura_contributor_insights_description_free(&d);
    return ok ? out_members(c, o) : API_NOMEM();
}

static kura_status run_list(api_call *c)
{
    const char *table = NULL;
    kura_status s = KURA_OK;
    if (jd_object_get(c->req, "TableName") && (s = api_table_member(c, c->req, &table)) != KURA_OK)
        return s;
    const jd_t *max = jd_object_get(c->req, "MaxResults");
    jd_int_t n = max ? jd_integer_value(max) : 0;
    kura_contributor_insights_list l;
    s = kura_list_contributor_insights(c->db, table, api_str(c->req, "NextToken"),
                                       n > 0 ? (uint32_t)n : 0, &l);
    if (s != KURA_OK) return api_engine(s);
    jd_t *arr = jd_array(c->doc);
    for (size_t i = 0; arr && i < l.count; i++) {
        const kura_contributor_insights_summary *e = &l.summaries[i];
        jd_t *o = jd_object(c->doc);
        if (!o || !put_summary(c->doc, o, e->table_name, e->index_name, e->status, e->mode) ||
            jd_array_append(arr, o) != 0)
            arr = NULL;
    }
    s = arr ? api_out_json(c, "ContributorInsightsSummaries", arr) : API_NOMEM();
    if (s == KURA_OK && l.next_token)
        s = api_out_json(c, "NextToken", jd_string(c->doc, l.next_token));
    kura_contributor_insights_list_free(&l);
    return s;
}

const api_op api_op_update_contributor_insights = {"UpdateContributorInsights", run_update};
const api_op api_op_describe_contributor_insights = {"DescribeContributorInsights",
                                                     run_describe};
const api_op api_op_list_contributor_insights = {"ListContributorInsights", run_list};
