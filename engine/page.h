/*
 * page.h - what Query and Scan share (engine/ only): the parsed expressions of a read request,
 * the checks both make, and the page loop that reads one page of items from a range of keys of
 * a table's tree or of one of its secondary indexes' trees.
 *
 * A page (DynamoDB's rules, engine/page.c):
 *  - reads items in key order (or backwards) from one snapshot, the iterator's;
 *  - stops after `limit` items READ (0: no limit) or once the items read reach 1 MB (the item
 *    that crosses the limit is part of the page); either stop returns LastEvaluatedKey, the
 *    key of the last item read, even when no item follows (as DynamoDB does): the table key,
 *    or for an index the index key attributes and the table key attributes together;
 *  - applies the filter after reading (ScannedCount counts every item read, Count the items
 *    that passed), then the projection;
 *  - charges the total DynamoDB size of the items read (filtered out ones too), rounded up to
 *    4 KB once, halved for eventually consistent reads. On an index those are the index
 *    entries (projected items), charged to the index; an item read whole from the table for
 *    an LSI costs its own read, charged to the table (see page_index below).
 * Nothing here is thread-safe on its own: a request belongs to one thread.
 */
#ifndef KURA_ENGINE_PAGE_H
#define KURA_ENGINE_PAGE_H

#include "engine/expr/expr.h"
#include "engine/table.h"
#include "engine/table_index.h"

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
 * ALL_ATTRIBUTES and COUNT exclude one, ALL_PROJECTED_ATTRIBUTES excludes one and needs an
 * index (`indexed`: the request has IndexName). On success *count_only_out tells whether the
 * page returns no items (COUNT). KURA_E_INVALID with DynamoDB's messages.
 */
kura_status page_check_select(kura_select select, bool has_proj, bool indexed,
                              bool *count_only_out);

/*
 * Expression paths that go into a key attribute ("pk.a", "sk[0]") in the projection or the
 * filter: "Key attributes must be scalars; list random access '[]' and map lookup '.' are
 * not allowed: Key: <name>" for the table's key attributes, "...: IndexKey: <name>" for the
 * key attributes of any of its indexes (GSIs, then LSIs, as dynalite's validateKeyPaths; also
 * when the request reads the table; not of GSIs being deleted). The projection is checked
 * first, then the filter; the table's key attributes in schema order before the indexes'.
 * Takes db->tables_mu (UpdateTable adds and drops GSIs under it).
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

/*
 * A secondary index a Query or Scan reads (IndexName). Its entries' values are the projected
 * items (docs/format/index.md); a page returns them, or their ProjectionExpression paths.
 * DynamoDB reads an LSI's item from the table when the request needs attributes the LSI does
 * not store: Select ALL_ATTRIBUTES, or a ProjectionExpression naming such an attribute
 * (`fetch`): that read costs the item's own read units (ceil(size / 4 KB), halved when
 * eventually consistent), charged to the table, on top of the index entries read. A GSI
 * refuses those requests instead. A Scan whose filter names attributes the index does not
 * store evaluates it on the table's item (`fetch_filter`, LSI or GSI: DynamoDB Local 1.25.1
 * does so; a Query refuses such a filter), charged the same way. An entry whose item is gone
 * when it is read (a race with a delete) is skipped. Items read from the table count towards
 * the 1 MB of a page with the entries.
 */
typedef struct page_index {
    int pos;            /* index number in the table (engine/table_index.h) */
    unsigned slot;      /* the reader count it holds: t->ix_readers[pos][slot] */
    const idx_def *def; /* the table's, valid while the table is pinned */
    kura_tree *tree;
    bool global;
    bool fetch;        /* return the table's items (then projected) instead of the entries */
    bool fetch_filter; /* evaluate the filter on the table's items */
} page_index;

/*
 * The index called `name` of `t`, its tree and kind into *out (fetch flags false). Errors,
 * KURA_E_INVALID with DynamoDB's messages: "The table does not have the specified index:
 * <name>" (also for a GSI being deleted); a GSI still being backfilled (UpdateTable Create):
 * "Cannot read from backfilling global secondary index: <name>" (the service's wording, not
 * verified: DynamoDB Local 1.25.1 creates indexes at once). KURA_E_NOT_SUPPORTED when the
 * index has no open tree. On success the read is counted in t->ix_readers: end it with
 * page_index_release.
 */
kura_status page_index_find(kura_table *t, const char *name, page_index *out);
/* Ends the read page_index_find began (an index UpdateTable deletes keeps its tree until its
 * reads are done: t->ix_readers). No-op on an index not found. Call before releasing the
 * table. */
void page_index_release(kura_table *t, page_index *ix);

/* ConsistentRead on a GSI: "Consistent read cannot be true when querying a GSI" (Query) or
 * "... when scanning a GSI" (Scan), DynamoDB Local 1.25.1's messages. An LSI allows it. */
kura_status page_index_check_consistent(const page_index *ix, bool consistent, bool is_query);

/*
 * ExclusiveStartKey of a read on index `d`: exactly the table's and the index's key attributes
 * (an attribute in both counted once). Checks and messages, in DynamoDB Local 1.25.1's order:
 *   a map of another size: "Exclusive Start Key must have same size as table's key schema";
 *   per table key attribute, then per other index key attribute, in schema order: absent:
 *     "The provided starting key is invalid"; of another type: "The provided key element does
 *     not match the schema" (dynalite's, as Query and Scan on a table say; DynamoDB Local
 *     1.25.1 says "Type mismatch for attribute to update");
 *   then empty S/B values, table key attributes first: "The provided starting key is invalid:
 *     One or more parameter values are not valid. The AttributeValue for a key attribute
 *     cannot contain an empty string value. Key: <attr>", and for an index key attribute
 *     "The provided starting key is invalid: One or more parameter values are not valid. A
 *     value specified for a secondary index key is not supported. The AttributeValue for a key
 *     attribute cannot contain an empty string value. IndexName: <index>, IndexKey: <attr>"
 *     (binary: "empty binary value").
 * On success the entry key of the start key is appended to `entry_key_out`.
 */
kura_status page_index_start_key(const kura_table *t, const idx_def *d, const kura_value *esk,
                                 kbuf *entry_key_out);

/*
 * The filter of a read on an index. A Query's filter may not use the index's key attributes
 * ("Filter Expression can only contain non-primary key attributes: Primary key attribute:
 * <attr>", in key schema order; the table's key attributes are allowed) nor attributes the
 * index does not store ("One or more parameter values were invalid: Secondary index <name>
 * does not project one or more filter attributes: [<a>, <b>]", the names sorted, as DynamoDB
 * Local 1.25.1 lists them). A Scan's filter may use anything; naming attributes the index does
 * not store sets ix->fetch_filter.
 */
kura_status page_index_check_filter(const kura_table *t, page_index *ix, const expr_node *filter,
                                    bool is_query);

/*
 * Select and ProjectionExpression of a read on an index (after page_check_select): on a GSI,
 * Select ALL_ATTRIBUTES needs projection type ALL ("One or more parameter values were invalid:
 * Select type ALL_ATTRIBUTES is not supported for global secondary index <name> because its
 * projection type is not ALL") and the projection may only name attributes the index stores
 * ("One or more parameter values were invalid: Global secondary index <name> does not project
 * [<a>, <b>]", the names in the order of DynamoDB Local 1.25.1's hash set, see page.c); on an
 * LSI those requests set ix->fetch. The projection is checked before Select, as DynamoDB
 * Local does.
 */
kura_status page_index_check_select(const kura_table *t, page_index *ix, kura_select select,
                                    const expr_projection *proj);

/* One page to read. Every pointer is borrowed for the call. */
typedef struct page_req {
    kura_table *t;
    const page_index *ix;      /* NULL: the table's own tree */
    uint32_t part_lo, part_hi; /* the partitions the range lies in (tree_iter_new) */
    const page_range *range;
    bool backward;               /* from the end of the range (ScanIndexForward false) */
    uint32_t limit;              /* items read at most; 0: no limit */
    const expr_node *filter;     /* NULL: every item */
    const expr_projection *proj; /* NULL: whole items (or whole entries) */
    bool count_only;             /* Select COUNT: no items */
    bool consistent;             /* capacity: strongly consistent reads cost twice as much */
    kura_return_capacity return_capacity;
    /* A Query's partition key for the capacity accounting and throttling (engine/tcap.h):
     * on the table, its storage key prefix hash64 || enc(pk); on an index, the range's
     * lower bound (the entry key's hash and HASH values lead it). Unset: a Scan. */
    bool query;
} page_req;

/*
 * Reads one page into *page_out (free with kura_page_free). Errors: KURA_E_CORRUPTION for a
 * stored item or index entry that does not decode (naming the table and the index), storage
 * errors from the iterator and from the table reads, KURA_E_NOMEM. *page_out is written only
 * on success.
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
