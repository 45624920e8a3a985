/*
 * get_encoded.h - GetItem without decoding the item, for the JSON API (api/req_items.c).
 *
 * kura_get_item() decodes the stored item into a kura_value tree, which the JSON layer then
 * walks to print and frees: for a GetItem over HTTP that was a third of the time spent in
 * kura_execute (docs/BENCHMARKS.md, "HTTP"). This variant leaves the item in its stored
 * encoding (docs/format/item.md), checked like val_decode() checks it, for the caller to
 * print straight from the bytes.
 */
#ifndef KURA_ENGINE_GET_ENCODED_H
#define KURA_ENGINE_GET_ENCODED_H

#include <stdbool.h>

#include "kura.h"
#include "util/buf.h"

/* kura_get_item() with the same checks, errors and result, except that when the request has
 * no projection and asks for no consumed capacity, the item is put in *enc in its stored
 * encoding (replacing enc's contents; empty if there is no item), res_out->item stays NULL
 * and *encoded_out is true. Otherwise *encoded_out is false and res_out is kura_get_item()'s.
 * The caller frees res_out with kura_get_item_res_free() either way. */
kura_status kura_get_item_encoded(kura_db *db, const kura_get_item_req *req,
                                  kura_get_item_res *res_out, kbuf *enc, bool *encoded_out);

#endif
