# Writes crd.yaml and objects.yaml of this case: a CRD with a string field per `pattern` (Go
# RE2 syntax as kube-openapi compiles it: classes, Unicode, flags, repetition, anchors), and
# objects setting one field each to one of a list of ASCII, non-ASCII and control strings.
# Run from this directory; then ../regen.sh string-patterns. (Patterns Go refuses are in
# ../../check/invalid-patterns.yaml.)
import json, random
random.seed(11)
patterns = [r"^\d+$", r"^\w+$", r"^\s*$", r"^\S+$", r"^[a-z]+$", r"^[[:alpha:]]+$", r"^[[:^digit:]]+$", r"^\p{L}+$", r"^\pL+$", r"^\p{Greek}+$", r"^\P{L}+$",
  r"(?i)^abc$", r"^(?i:a)bc$", r"^a.c$", r"(?s)^a.c$", r"^a\.c$", r"\bfoo\b", r"^\x41$", r"^\x{e9}$", r"^[\d-]+$", r"^[^\d]+$",
  r"^a{2,3}$", r"^a{,3}$", r"^a{2}$", r"^(a|ab)(c|bcd)$", r"^(?:ab)+$", r"^a*?b$", r"^[a-]+$", r"^[]a]+$", r"^[\]a]+$", r"^\Qa.b\E$",
  r"^\z", r"\A", r"^a$", r"(?m)^b$", r"^.$", r"^..$", r"^[^a]$", r"^\pN+$", r"^[\p{Lu}]+$", r"^[[:upper:]]+$", r"^[[:word:]]+$", 
  r"^\D+$", r"^\W+$", r"^[\w.-]+@[\w.-]+$", r"^(?P<n>a)$", r"^(?<n>a)$", r"^\v$", r"^\f$", r"^[\s]+$", r"^\x{10FFFF}$", r"^[^\x00-\x7F]+$", r"^[a-z&&[^b]]+$", r"x*", r"^(?U)a+$"]
values = ["", "a", "b", "abc", "ABC", "aBc", "a.c", "a\nc", "axc", "123", "12-3", "١٢٣", "é", "É", "αβγ", "ΑΒΓ", "foo", "foo bar", "foobar", " ", "\t", "\u00a0", "\u2003", "\v", "\f",
  "aa", "aaa", "aaaa", "ab", "abcd", "abbcd", "a]", "]", "-", "a-", "a.b", "a\\.b", "x@y.z", "_", "a_b", "\U0010FFFF", "\ufeff", "A", "a\n", "\nb", "a\nb", "ⅷ", "²", "ǅ", "İ", "ß", "a\u0301"]
props = {}
for i, p in enumerate(patterns):
    props["p%d" % i] = {"type": "string", "pattern": p}
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}}}]}}
open("crd.yaml", "w").write(json.dumps(crd))
n = 0
with open("objects.yaml", "w") as fh:
    fh.write("# Written by generate.py (YAML documents in JSON form).\n")
    for i in range(len(patterns)):
        for v in values:
            fh.write(json.dumps({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "o%d" % n}, "spec": {"p%d" % i: v}}, ensure_ascii=False) + "\n---\n")
            n += 1
