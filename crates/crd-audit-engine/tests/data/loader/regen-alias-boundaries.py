#!/usr/bin/env python3
"""Regenerates alias-boundaries.json: for documents of a few shapes that grow with a count n,
the largest n the oracle accepts and the smallest it refuses with go-yaml's "document
contains excessive aliasing". tests/loader_cases.rs builds the same documents (keep the two
generators identical).

Usage: ORACLE=path/to/oracle ./regen-alias-boundaries.py
"""
import json, os, subprocess, tempfile

ORACLE = os.environ["ORACLE"]


def doc(shape, p, n):
    if shape == "list":  # an anchored list of p scalars, then n aliases of it
        return "b: &b [" + ",".join(["x"] * p["items"]) + "]\nr: [" + ",".join(["*b"] * n) + "]\n"
    if shape == "map":  # an anchored mapping of p keys, then n aliases of it
        keys = ",".join(f"k{i}: v" for i in range(p["keys"]))
        return "b: &b {" + keys + "}\nr: [" + ",".join(["*b"] * n) + "]\n"
    if shape == "merge":  # an anchored mapping of p keys merged into n mappings
        keys = ",".join(f"k{i}: v" for i in range(p["keys"]))
        items = "".join(f"  - {{<<: *b, own: {i}}}\n" for i in range(n))
        return "b: &b {" + keys + "}\nr:\n" + items
    if shape == "nested":  # aliases of a list of 10 aliases of a list of 10 scalars
        return ("a0: &a0 [" + ",".join(["x"] * 10) + "]\na1: &a1 [" + ",".join(["*a0"] * 10)
                + "]\nr: [" + ",".join(["*a1"] * n) + "]\n")
    if shape == "padded":  # plain scalars, aliases, then n more plain scalars
        return ("pad1: [" + ",".join(["p"] * p["pad"]) + "]\nb: &b [" + ",".join(["x"] * p["items"])
                + "]\nr: [" + ",".join(["*b"] * p["aliases"]) + "]\npad2: [" + ",".join(["p"] * n) + "]\n")
    raise ValueError(shape)


def refused(shape, p, n):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(doc(shape, p, n))
        f.flush()
        r = subprocess.run([ORACLE, "tojson", f.name], capture_output=True, text=True)
    if r.returncode == 0:
        return False
    assert "yaml: document contains excessive aliasing" in r.stderr, r.stderr
    return True


def boundary(shape, p, lo, hi):
    assert not refused(shape, p, lo) and refused(shape, p, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refused(shape, p, mid):
            hi = mid
        else:
            lo = mid
    return {"shape": shape, "params": p, "accepted": lo, "refused": hi}


cases = [
    boundary("list", {"items": 10}, 1, 100000),
    boundary("map", {"keys": 100}, 1, 100000),
    boundary("merge", {"keys": 100}, 1, 5000),
    boundary("nested", {}, 1, 100000),
    boundary("padded", {"pad": 1100000, "items": 10, "aliases": 91000}, 0, 2000000),
]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "alias-boundaries.json"), "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
