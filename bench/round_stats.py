"""round_stats.py - what the per-suite table scripts (bench/index_tables.py,
bench/txn_tables.py) share: figures taken round by round from kura-bench JSON files and the
verdict of a target over the rounds.

`files` is a list of tuples whose second member is {workload: {repeat: run}} (each script's
load()); a round is one "repeat" of one file.
"""
import statistics


def rounds(files, fn):
    """fn(runs_of_one_round) for every round of every file where it has a value."""
    vals = []
    for f in files:
        runs = f[1]
        for rep in sorted({k for w in runs.values() for k in w}):
            one = {w: runs[w][rep] for w in runs if rep in runs[w]}
            try:
                v = fn(one)
            except (KeyError, ZeroDivisionError):
                v = None
            if v is not None:
                vals.append(v)
    return vals


def extra(run, name):
    return run["extras"][name]


def verdict(vals, ok):
    """"met" when every round meets the target, "not met" when none does, "at the line"
    otherwise."""
    if not vals:
        return "no data"
    good = [v for v in vals if ok(v)]
    if len(good) == len(vals):
        return "met (every round)"
    if not good:
        return "**not met** (every round)"
    return "at the line: %d of %d rounds miss" % (len(vals) - len(good), len(vals))


def fmt(vals, f):
    """The median and every round's value, formatted with f."""
    if not vals:
        return "n/a"
    return "%s (rounds %s)" % (f % statistics.median(vals), ", ".join(f % v for v in vals))
