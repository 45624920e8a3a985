/*
 * legacy.h - DynamoDB's legacy (pre-expression) request parameters, rewritten into the
 * equivalent expression parameters before a request is executed.
 *
 * Older SDK code still sends Expected, ConditionalOperator, AttributeUpdates, KeyConditions,
 * QueryFilter, ScanFilter and AttributesToGet. kura implements only the expression forms, so
 * the JSON API rewrites a request body, at the JSON level, following DynamoDB's "Legacy
 * conditional parameters" documentation:
 *
 *   Expected (+ ConditionalOperator)   -> ConditionExpression   PutItem, UpdateItem, DeleteItem
 *   AttributeUpdates                   -> UpdateExpression      UpdateItem
 *   KeyConditions                      -> KeyConditionExpression Query
 *   QueryFilter / ScanFilter (+ C.O.)  -> FilterExpression      Query / Scan
 *   AttributesToGet                    -> ProjectionExpression  GetItem, Query, Scan,
 *                                                               BatchGetItem (per table)
 *
 * Every attribute name goes through a generated ExpressionAttributeNames entry ("#l0",
 * "#l1"...), every value through a generated ExpressionAttributeValues entry (":l0"...), so
 * reserved words and odd characters in names need no care. Generated placeholders skip keys
 * the request already has (Query may combine KeyConditions with a FilterExpression or a
 * ProjectionExpression, as DynamoDB allows).
 *
 * The checks DynamoDB makes of the legacy parameters themselves happen here, with its
 * messages: mixing legacy and expression parameters, ExpressionAttributeNames/Values without
 * an expression, ConditionalOperator without two or more conditions, Expected's
 * Exists/Value/ComparisonOperator forms, each ComparisonOperator's number and types of
 * arguments, BETWEEN bounds in the wrong order, AttributeUpdates actions and value types,
 * operators KeyConditions cannot use, AttributesToGet duplicates. Checks that apply equally
 * to the expression forms (key schema, item contents, set contents) are left to the engine.
 */
#ifndef KURA_API_LEGACY_H
#define KURA_API_LEGACY_H

#include "api/jdoc.h"

#include "kura.h"

/*
 * Rewrites the legacy parameters of `req` (the request body of operation `op`, e.g.
 * "PutItem", a JSON object) into expression parameters, in place: the legacy members are
 * removed, the expressions and ExpressionAttributeNames/Values entries added. Operations
 * without legacy parameters, and requests that use none, are left unchanged (the checks of
 * ExpressionAttributeNames/Values without an expression still apply to the operations listed
 * above). `req` is borrowed; values moved into ExpressionAttributeValues are the removed
 * members' own nodes (nodes live as long as their document), not copies.
 *
 * Returns KURA_OK, or KURA_E_INVALID with DynamoDB's ValidationException message (then `req`
 * is unchanged), or KURA_E_NOMEM (then `req` may be partly rewritten and must be discarded).
 * Thread safety: none needed; `req` belongs to the calling thread.
 */
kura_status legacy_rewrite(const char *op, jd_t *req);

#endif
