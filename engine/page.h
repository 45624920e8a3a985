/*
 * page.h - what Query and Scan share (engine/ only): the parsed expressions of a read request,
 * the checks both make, and the page loop that reads one page of items from a range of a
 * table's storage keys.
 *
 * A page (DynamoDB's rules, engine/page.c):
 *  - reads items in key order (or backwards) from one snapshot, the iterator's;
 *  - stops after `limit` items READ (0: no limit) or once the items read reach 1 MB (the item
 *    that crosses the limit is part of the page); either stop returns LastEvaluatedKey, the
 *    table key of the last item read, even when no item follows (as DynamoDB does);
 *  - applies the filter after reading (ScannedCount counts every item read, Count the items
 *    that passed), then the projection;
 *  - charges the total DynamoDB size of the items read (filtered out ones too), rounded up to
 *    4 KB once, halved for eventually consistent reads.
 * Nothing here is thread-safe on its own: a request belongs to one thread.
 */
#ifndef KURA_ENGINE_PAGE_H
#define KURA_ENGINE_PAGE_H

#include "engine/expr/expr.h"
#include "engine/table.h"

/* Items read per page at most, in DynamoDB item bytes. */
#define PAGE_MAX_BYTES (1024u * 1024u)

/* The parsed expressions of a Query or Scan; NULL members were not given. The trees live in
 * ctx (NULL when the request has no expression and no attribute maps). */
typedef struct page_exprs {
    expr_ctx *ctx;
    expr_node *key_cond; /* KeyConditionExpression (Query) */
    expr_node *filter;   /* FilterExpression */
    expr_projection *proj;
} page_exprs;

/*
 * Checks the expression parameters and parses the expressions into *out, in DynamoDB's order:
 * names without any expression, values without a value-taking expression ("ExpressionAttribute
 * Values can only be specified when using expressions: FilterExpression is null"), for a Query
 * (`is_query`) a missing KeyConditionExpression, the maps, KeyConditionExpression,
 * FilterExpression, ProjectionExpression, then unused names and values. KURA_E_INVALID with
 * DynamoDB's message, KURA_E_NOMEM. On failure *out is left empty.
 */
kura_status page_exprs_parse(const kura_expression_attributes *ea, bool is_query,
                             const char *key_cond, const char *filter, const char *proj,
                             page_exprs *out);
void page_exprs_free(page_exprs *e);

/*
 * Select against the projection and the index: SPECIFIC_ATTRIBUTES needs a projection,
 * ALL_ATTRIBUTES and COUNT exclude one, ALL_PROJECTED_ATTRIBUTES needs an index (tables have
 * none yet, so it is always an error here). On success *count_only_out tells whether the page
 * returns no items (COUNT). KURA_E_INVALID with DynamoDB's messages.
 */
kura_status page_check_select(kura_select select, bool has_proj, bool *count_only_out);

/*
 * Expression paths that go into a key attribute ("pk.a", "sk[0]") in the projection or the
 * filter: "Key attributes must be scalars; list random access '[]' and map lookup '.' are
 * not allowed: Key: <name>" (the projection is checked first, key attributes in schema order).
 */
kura_status page_check_key_paths(const kura_table *t, const expr_projection *proj,
                                 const expr_node *filter);

/* Whether the expression tree `n` reads the top-level attribute `name` (any path starting
 * with it). Query rejects filters on key attributes with this. */
bool page_expr_uses(const expr_node *n, const char *name, size_t name_len);

/* A range of storage keys [lo, hi): lo inclusive (empty: from the first key), hi exclusive
 * (has_hi false: to the last key). Both buffers are owned by the range. */
typedef struct page_range {
    kbuf lo, hi;
    bool has_hi;
} page_range;

void page_range_free(page_range *r);

/* memcmp order of the key a[0..alen) and the bytes of b (shorter first on a tie). */
int page_key_cmp(const void *a, size_t alen, const kbuf *b);

/* One page to read. Every pointer is borrowed for the call. */
typedef struct page_req {
    kura_table *t;
    uint32_t part_lo, part_hi; /* the partitions the range lies in (tree_iter_new) */
    const page_range *range;
    bool backward;               /* from the end of the range (ScanIndexForward false) */
    uint32_t limit;              /* items read at most; 0: no limit */
    const expr_node *filter;     /* NULL: every item */
    const expr_projection *proj; /* NULL: whole items */
    bool count_only;             /* Select COUNT: no items */
    bool consistent;             /* capacity: strongly consistent reads cost twice as much */
    kura_return_capacity return_capacity;
} page_req;

/*
 * Reads one page into *page_out (free with kura_page_free). Errors: KURA_E_CORRUPTION for a
 * stored item that does not decode (naming the table), storage errors from the iterator,
 * KURA_E_NOMEM. *page_out is written only on success.
 */
kura_status page_run(const page_req *pr, kura_page *page_out);

/*
 * Scan's Segment / TotalSegments, as a caller that knows which of the two the request gave
 * (the JSON layer) checks them: one without the other, TotalSegments outside 1..1000000,
 * Segment outside 0..999999 or not below TotalSegments. KURA_E_INVALID with DynamoDB's
 * messages. kura_scan() calls it with both present when has_segment is set. (DynamoDB, as
 * dynalite reproduces it, accepts Segment 0 without TotalSegments: a whole-table scan.)
 */
kura_status scan_check_segment_params(bool has_segment, uint32_t segment, bool has_total_segments,
                                      uint32_t total_segments);

#endif
