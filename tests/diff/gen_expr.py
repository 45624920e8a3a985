"""gen_expr.py - This file contains the request side of the differential test's generator: the
Op record (one step of the test), the placeholder registry of a request (Expr) and the rendering
of the generator's expression trees (node shapes in refmodel.py) as DynamoDB expression text.

Conditions are rendered with the fewest parentheses DynamoDB's precedence needs (NOT binds
tighter than AND, AND tighter than OR), plus an occasional redundant pair, so the parser's
precedence is exercised; update actions are grouped by clause (SET, REMOVE, ADD, DELETE) by the
caller.
"""

import base64

ALIAS_ONLY = {"date", "my-attr", "x.y", "name"}  # not valid bare: reserved word, '-', '.'



def b64(bs):
    return base64.b64encode(bs).decode("ascii")



class Op:
    def __init__(self, kind, op, req, meta, cls):
        self.kind = kind
        self.op = op
        self.req = req
        self.meta = meta
        self.cls = cls


class Expr:
    """Placeholder registry of one request: attribute names and values used by its expressions."""

    def __init__(self, rng):
        self.rng = rng
        self.names = {}   # name -> "#nK"
        self.values = {}  # ":vK" -> value

    def name(self, n):
        if n in ALIAS_ONLY or self.rng.random() < 0.3:
            if n not in self.names:
                self.names[n] = "#n%d" % len(self.names)
            return self.names[n]
        return n

    def path(self, path):
        out = self.name(path[0])
        for step in path[1:]:
            out += "[%d]" % step if isinstance(step, int) else "." + self.name(step)
        return out

    def value(self, v):
        ph = ":v%d" % len(self.values)
        self.values[ph] = v
        return ph

    def attach(self, req):
        if self.names:
            req["ExpressionAttributeNames"] = {ph: n for n, ph in self.names.items()}
        if self.values:
            req["ExpressionAttributeValues"] = dict(self.values)
        return req


# ---- rendering -------------------------------------------------------------------------------

PREC = {"or": 1, "and": 2, "not": 3}


def render_operand(o, ex):
    if o[0] == "path":
        return ex.path(o[1])
    if o[0] == "val":
        return o[1]
    return "size(%s)" % ex.path(o[1])


def render(cond, ex, parent=0):
    """Condition text with the fewest parentheses DynamoDB's precedence needs (NOT > AND > OR),
    plus an occasional redundant pair."""
    k = cond[0]
    if k in ("and", "or"):
        text = "%s %s %s" % (render(cond[1], ex, PREC[k]), k.upper(), render(cond[2], ex, PREC[k]))
        need = PREC[k] < parent
    elif k == "not":
        text = "NOT " + render(cond[1], ex, PREC[k])
        need = False
    else:
        need = False
        if k == "exists":
            text = "attribute_exists(%s)" % ex.path(cond[1])
        elif k == "not_exists":
            text = "attribute_not_exists(%s)" % ex.path(cond[1])
        elif k == "cmp":
            text = "%s %s %s" % (render_operand(cond[2], ex), cond[1],
                                 render_operand(cond[3], ex))
        elif k == "between":
            text = "%s BETWEEN %s AND %s" % tuple(render_operand(o, ex) for o in cond[1:])
        elif k == "in":
            text = "%s IN (%s)" % (render_operand(cond[1], ex),
                                   ", ".join(render_operand(o, ex) for o in cond[2]))
        elif k == "begins_with":
            text = "begins_with(%s, %s)" % (ex.path(cond[1]), render_operand(cond[2], ex))
        elif k == "contains":
            text = "contains(%s, %s)" % (ex.path(cond[1]), render_operand(cond[2], ex))
        else:
            text = "attribute_type(%s, %s)" % (ex.path(cond[1]), render_operand(cond[2], ex))
    if need or ex.rng.random() < 0.05:
        return "(" + text + ")"
    return text


def render_rhs(rhs, ex):
    k = rhs[0]
    if k == "val":
        return rhs[1]
    if k == "path":
        return ex.path(rhs[1])
    if k in ("plus", "minus"):
        return "%s %s %s" % (render_rhs(rhs[1], ex), "+" if k == "plus" else "-",
                             render_rhs(rhs[2], ex))
    if k == "if_not_exists":
        return "if_not_exists(%s, %s)" % (ex.path(rhs[1]), render_rhs(rhs[2], ex))
    return "list_append(%s, %s)" % (render_rhs(rhs[1], ex), render_rhs(rhs[2], ex))


def render_action(a, ex):
    if a[0] == "set":
        return "%s = %s" % (ex.path(a[1]), render_rhs(a[2], ex))
    if a[0] == "remove":
        return ex.path(a[1])
    return "%s %s" % (ex.path(a[1]), a[2])


def overlaps(p, q):
    n = min(len(p), len(q))
    return p[:n] == q[:n]
