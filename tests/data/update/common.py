"""Helpers shared by the update cases' generate.py scripts: writing documents, the stored
objects' metadata, and the metadata-only change."""
import json

def write_docs(path, docs):
    with open(path, "w") as fh:
        fh.write("# Written by generate.py (YAML documents in JSON form).\n")
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n---\n")


def meta(name, i):
    m = {"name": name, "namespace": "default", "resourceVersion": "1", "uid": "00000000-0000-4000-8000-%012d" % i,
         "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z"}
    if i % 3 == 0:
        m["finalizers"] = ["example.com/keep"]
    return m


def touch_metadata(o):
    m = o["metadata"]
    m.setdefault("labels", {})["example.com/touched"] = "yes"
    m["finalizers"] = m.get("finalizers", [])[:-1] if m.get("finalizers") else ["example.com/cleanup"]
