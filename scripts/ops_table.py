#!/usr/bin/env python3
"""ops_table.py - prints the operations of DynamoDB's service model (DynamoDB_20120810 and
DynamoDB Streams' DynamoDBStreams_20120810, from botocore's service-2.json) and checks that
docs/data-model.md's operations table cannot drift from the model or from kura:

  - every operation of the model has one row in the table;
  - every row names an operation of the model (when the model is at least as new as the table:
    an older botocore, such as Debian's, lacks the newest operations, so that direction is
    checked only with --strict);
  - a row says "implemented" exactly when api/ registers the operation (the names of the
    `const api_op api_op_x = {"Name", ...}` definitions in api/*.c);
  - the page's "N of M implemented" counts the table's rows.

Usage: scripts/ops_table.py [--check] [--strict] [--model DIR]
  --model DIR   botocore's data directory (default: the one of the running Python's botocore)
Exit status 0 when the checks pass, 1 with one line per problem otherwise.
"""
import argparse
import glob
import gzip
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVICES = ("dynamodb", "dynamodbstreams")


def model_dir():
    import botocore

    return os.path.join(os.path.dirname(botocore.__file__), "data")


def load_ops(data_dir):
    """{service: sorted operation names} of the newest API version of each service."""
    ops = {}
    for svc in SERVICES:
        files = sorted(glob.glob(os.path.join(data_dir, svc, "*", "service-2.json*")))
        if not files:
            sys.exit(f"ops_table: no service model of {svc} under {data_dir}")
        path = files[-1]
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            ops[svc] = sorted(json.load(f)["operations"])
    return ops


def doc_text():
    with open(os.path.join(ROOT, "docs", "data-model.md"), encoding="utf-8") as f:
        return f.read()


def doc_rows():
    """{operation: status text} of docs/data-model.md's table (rows `| Op | service | status |`)."""
    rows = {}
    in_table = False
    with open(os.path.join(ROOT, "docs", "data-model.md"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("| operation | service |"):
                in_table = True
                continue
            if in_table and not line.startswith("|"):
                break
            if in_table and not line.startswith("|--"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                name = cells[0].strip("`")
                if name in rows:
                    rows[name] += " DUPLICATE"
                rows[name] = cells[2] if len(cells) > 2 else ""
    return rows


def kura_ops():
    names = set()
    for path in glob.glob(os.path.join(ROOT, "api", "*.c")):
        with open(path, encoding="utf-8") as f:
            names.update(re.findall(r'const api_op api_op_\w+ =\s*\{\s*"(\w+)"', f.read()))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--model")
    args = ap.parse_args()
    ops = load_ops(args.model or model_dir())
    if not args.check:
        for svc in SERVICES:
            for op in ops[svc]:
                print(svc, op)
        return 0
    rows, mine = doc_rows(), kura_ops()
    model = {op for svc in SERVICES for op in ops[svc]}
    problems = []
    if not rows:
        problems.append("docs/data-model.md has no operations table")
    for op in sorted(model - rows.keys()):
        problems.append(f"{op}: in DynamoDB's model, missing from docs/data-model.md's table")
    if args.strict:
        for op in sorted(rows.keys() - model):
            problems.append(f"{op}: in docs/data-model.md's table, not in DynamoDB's model")
    for op, status in sorted(rows.items()):
        if "DUPLICATE" in status:
            problems.append(f"{op}: more than one row")
        said = status.startswith("implemented")
        if said != (op in mine):
            problems.append(f"{op}: the table says '{status[:40]}', api/ "
                            f"{'implements' if op in mine else 'does not implement'} it")
    # the page's count ("N of M implemented") follows the table
    said_count = re.search(r"(\d+) of (\d+) implemented", doc_text())
    implemented = sum(1 for s in rows.values() if s.startswith("implemented"))
    if not said_count or (int(said_count[1]), int(said_count[2])) != (implemented, len(rows)):
        problems.append(f"docs/data-model.md should say '{implemented} of {len(rows)} "
                        f"implemented', says '{said_count[0] if said_count else 'nothing'}'")
    for p in problems:
        print("ops_table:", p)
    print(f"ops_table: {len(model)} operations in the model, {len(rows)} rows, "
          f"{len(mine)} implemented by kura: {'FAIL' if problems else 'ok'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
