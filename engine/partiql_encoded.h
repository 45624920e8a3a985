/*
 * partiql_encoded.h - ExecuteStatement without decoding the item a SELECT by key reads, for the
 * JSON API (api/req_partiql.c), as engine/get_encoded.h is for GetItem: a SELECT * by the full
 * key over JSON would otherwise decode the stored item into a kura_value tree only to print
 * it and free it, which GetItem over JSON does not.
 */
#ifndef KURA_ENGINE_PARTIQL_ENCODED_H
#define KURA_ENGINE_PARTIQL_ENCODED_H

#include <stdbool.h>

#include "kura.h"
#include "util/buf.h"

/* kura_execute_statement() with the same checks, errors and result, except that when the
 * statement is a GetItem (a SELECT by the full key) with no projection and the request asks
 * for no consumed capacity, the item is put in *enc in its stored encoding (empty if there is
 * no item), res_out->items stays NULL and *encoded_out is true: the Items are [*enc] or [].
 * Otherwise *encoded_out is false. The caller frees res_out with
 * kura_execute_statement_res_free() either way. */
kura_status kura_execute_statement_encoded(kura_db *db, const kura_execute_statement_req *req,
                                           kura_execute_statement_res *res_out, kbuf *enc,
                                           bool *encoded_out);

#endif
