#!/usr/bin/env python3
"""Writes CRDs shaped like those of a Crossplane provider family (upjet-generated managed
resources), for measuring crd-audit at that scale without downloading a provider:

    python3 scripts/crossplane-crds.py N OUT_DIR [OBJECTS_PER_CRD]

N CRDs, one file each (OUT_DIR/crds/NNNN-<plural>.yaml), cluster-scoped, two served
versions (v1beta1, and v1beta2 the storage version) with the same generated schema:
spec.forProvider and spec.initProvider (the same parameter tree) and status.atProvider
(the parameters plus observed fields), the usual deletionPolicy, managementPolicies
(an enum list with a default), providerConfigRef, publishConnectionDetailsTo and
writeConnectionSecretToReference, and the CEL rules upjet writes on spec for each required
parameter ("spec.forProvider.X is a required parameter"). The parameter trees are nested
objects and lists of objects of pseudo-random depth and width (seeded by the CRD's
number), so that schema sizes spread from about 40 KB to about 1.5 MB, most near 100 KB,
as in the public providers. With OBJECTS_PER_CRD, OUT_DIR/objects/NNNN.yaml holds that
many valid objects of each CRD.
"""
import json
import os
import random
import sys

SCALARS = [
    {"type": "string"},
    {"type": "string"},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "array", "items": {"type": "string"}},
    {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "granular"},
]


def words(rng, n):
    syll = ["net", "work", "sub", "id", "zone", "tag", "key", "ip", "rule", "port", "log", "auth",
            "role", "dns", "name", "vpc", "disk", "size", "type", "mode", "policy", "ref", "arn"]
    return "".join(rng.choice(syll).capitalize() if i else rng.choice(syll) for i in range(n))


def tree(rng, depth, width):
    """A parameter block: scalars, nested blocks and lists of blocks (as upjet emits them)."""
    props = {}
    for _ in range(width):
        name = words(rng, rng.randint(1, 3))
        roll = rng.random()
        if depth > 0 and roll < 0.25:
            props[name] = {
                "type": "array",
                "items": {"type": "object", "properties": tree(rng, depth - 1, max(2, width // 2))},
                "description": name + " blocks as documented below.",
            }
        elif depth > 0 and roll < 0.35:
            props[name] = {"type": "object", "properties": tree(rng, depth - 1, max(2, width // 2)),
                           "description": name + " block as documented below."}
        else:
            s = dict(rng.choice(SCALARS))
            s["description"] = "The " + name + " of the resource. " + "Changing this forces a new resource. " * rng.randint(0, 3)
            props[name] = s
    return props


def ref(description):
    return {"type": "object", "description": description, "properties": {
        "name": {"type": "string", "description": "Name of the referenced object."},
        "policy": {"type": "object", "properties": {
            "resolution": {"type": "string", "default": "Required", "enum": ["Required", "Optional"]},
            "resolve": {"type": "string", "enum": ["Always", "IfNotPresent"]}}}},
        "required": ["name"]}


def crd(i):
    rng = random.Random(i)
    big = rng.random()
    width = 8 if big < 0.85 else (12 if big < 0.98 else 20)
    depth = 2 if big < 0.85 else 3
    if i % 500 == 7:
        width, depth = 24, 3  # a few of about 1.5 MB, as the largest generated CRDs are
    params = tree(rng, depth, width)
    required = sorted(rng.sample(sorted(params), min(2, len(params))))
    kind = words(rng, 2).capitalize() + str(i)
    plural = kind.lower() + "s"
    group = "svc%d.upbound-like.example" % (i % 40)
    observed = dict(params)
    observed["id"] = {"type": "string"}
    observed["arn"] = {"type": "string"}
    rules = [{"message": "spec.forProvider.%s is a required parameter" % r,
              "rule": "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || "
                      "'Update' in self.managementPolicies) || has(self.forProvider.%s) || "
                      "(has(self.initProvider) && has(self.initProvider.%s))" % (r, r)}
             for r in required]
    spec = {"type": "object", "required": ["forProvider"], "x-kubernetes-validations": rules, "properties": {
        "deletionPolicy": {"type": "string", "default": "Delete", "enum": ["Orphan", "Delete"]},
        "forProvider": {"type": "object", "properties": params},
        "initProvider": {"type": "object", "properties": params},
        "managementPolicies": {"type": "array", "default": ["*"],
                               "items": {"type": "string", "enum": ["Observe", "Create", "Update", "Delete", "LateInitialize", "*"]}},
        "providerConfigRef": ref("ProviderConfigReference specifies how the provider is configured."),
        "publishConnectionDetailsTo": {"type": "object", "properties": {
            "name": {"type": "string"},
            "configRef": ref("SecretStoreConfigRef specifies which secret store config should be used."),
            "metadata": {"type": "object", "properties": {
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "type": {"type": "string"}}}}, "required": ["name"]},
        "writeConnectionSecretToReference": {"type": "object", "required": ["name", "namespace"], "properties": {
            "name": {"type": "string"}, "namespace": {"type": "string"}}}}}
    status = {"type": "object", "properties": {
        "atProvider": {"type": "object", "properties": observed},
        "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                       "items": {"type": "object", "required": ["lastTransitionTime", "reason", "status", "type"], "properties": {
                           "lastTransitionTime": {"type": "string", "format": "date-time"},
                           "message": {"type": "string"}, "reason": {"type": "string"},
                           "status": {"type": "string"}, "type": {"type": "string"}}}},
        "observedGeneration": {"type": "integer", "format": "int64"}}}
    schema = {"type": "object", "required": ["spec"], "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": spec, "status": status}}
    version = lambda name, storage: {"name": name, "served": True, "storage": storage,
                                     "schema": {"openAPIV3Schema": schema},
                                     "subresources": {"status": {}},
                                     "additionalPrinterColumns": [
                                         {"name": "READY", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"},
                                         {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}
    doc = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "%s.%s" % (plural, group), "annotations": {"controller-gen.kubebuilder.io/version": "v0.16.3"}},
           "spec": {"group": group, "scope": "Cluster",
                    "names": {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": kind.lower(),
                              "categories": ["crossplane", "managed", "upbound-like"]},
                    "versions": [version("v1beta1", False), version("v1beta2", True)]}}
    return doc, params, required


def value(rng, s):
    t = s.get("type")
    if t == "object" and "properties" in s:
        return {k: value(rng, v) for k, v in list(s["properties"].items())[:4]}
    if t == "object":
        return {"k": "v"}
    if t == "array":
        return [value(rng, s["items"])]
    return {"string": "x", "number": 1.5, "boolean": True}.get(t, "x")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    n, out = int(sys.argv[1]), sys.argv[2]
    per = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    os.makedirs(os.path.join(out, "crds"), exist_ok=True)
    if per:
        os.makedirs(os.path.join(out, "objects"), exist_ok=True)
    total = 0
    for i in range(n):
        doc, params, required = crd(i)
        text = json.dumps(doc, indent=1)
        total += len(text)
        plural = doc["spec"]["names"]["plural"]
        with open(os.path.join(out, "crds", "%04d-%s.yaml" % (i, plural)), "w") as fh:
            fh.write(text + "\n")
        if per:
            rng = random.Random(10_000 + i)
            with open(os.path.join(out, "objects", "%04d.yaml" % i), "w") as fh:
                fh.write("# Written by scripts/crossplane-crds.py (YAML documents in JSON form).\n")
                for j in range(per):
                    fp = {k: value(rng, params[k]) for k in required}
                    obj = {"apiVersion": "%s/v1beta2" % doc["spec"]["group"], "kind": doc["spec"]["names"]["kind"],
                           "metadata": {"name": "%s-%d" % (plural[:40], j)}, "spec": {"forProvider": fp}}
                    fh.write(json.dumps(obj) + "\n---\n")
    print("%d CRDs, %.1f MB of schema text in %s" % (n, total / 1e6, out))


if __name__ == "__main__":
    main()
