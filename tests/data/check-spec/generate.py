# Writes crds.yaml: CRDs that vary one field outside the schema each (metadata.name, group,
# scope, names, short names, categories, version names, deprecation warnings, the API approval
# of protected groups, subresources, printer columns, conversion), one document each; then
# ../check-generated/regen.sh ../check-spec asks
# the oracle about each (oracle.jsonl, one line a CRD, in order). Selectable fields, the
# webhook URL and service checks, and storage/unique-version counts of versions whose schemas
# differ are left out: `check` does not cover them yet (see structural/crd_spec.rs).
# Subresource paths, printer columns and conversion settings are in, per version and shared.
import json, copy
base = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
  "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}, "sel": {"type": "string"}, "s": {"type": "string"}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "sel": {"type": "string"}}}}}}}]}}
def v(path, value, delete=False):
    c = copy.deepcopy(base)
    cur = c
    for p in path[:-1]:
        cur = cur[p]
    if delete: del cur[path[-1]]
    else: cur[path[-1]] = value
    return c
cases = []
N = ["spec", "names"]
for k, val in [("plural", "Things"), ("plural", "thing.s"), ("plural", ""), ("singular", "Thing"), ("singular", "things"), ("kind", "thing"), ("kind", "Thing-x"), ("kind", ""), ("kind", "List"),
               ("listKind", "ThingList"), ("listKind", "Thing"), ("listKind", "thinglist"), ("shortNames", ["th", "th"]), ("shortNames", ["TH"]), ("shortNames", ["things"]), ("shortNames", [""]),
               ("categories", ["all", "all"]), ("categories", ["A b"]), ("categories", [""])]:
    cases.append(v(N + [k], val))
for name in ["things.example.org", "thing.example.com", "things.example.com.", "Things.example.com"]:
    c = copy.deepcopy(base); c["metadata"]["name"] = name; cases.append(c)
for g in ["example", "Example.com", "example.com.", "", "k8s.io", "a.b.c.d", "-x.com"]:
    c = copy.deepcopy(base); c["spec"]["group"] = g; c["metadata"]["name"] = "things." + g; cases.append(c)
cases.append(v(["spec", "scope"], "Global"))
cases.append(v(["spec", "scope"], "Cluster"))
vs = base["spec"]["versions"][0]
def ver(**kw):
    c = copy.deepcopy(base)
    for k, val in kw.items():
        if val is None: del c["spec"]["versions"][0][k]
        else: c["spec"]["versions"][0][k] = val
    return c
for n in ["V1", "v1beta", "1", "v1.0", "", "v1alpha1x", "a" * 64]:
    cases.append(ver(name=n))
cases.append(ver(deprecated=True, deprecationWarning="x" * 300))
cases.append(ver(deprecated=False, deprecationWarning="x"))
cases.append(ver(deprecated=True, deprecationWarning="a\nb"))
cases.append(ver(subresources={"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.sel"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".status.replicas"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".status.replicas", "statusReplicasPath": ".spec.replicas"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".spec.s", "statusReplicasPath": ".status.replicas"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".spec.missing", "statusReplicasPath": ".status.missing"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": "spec.sel"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".metadata.sel"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".spec.replicas"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".spec[0]", "statusReplicasPath": ".status.replicas"}}))
cases.append(ver(subresources={"scale": {"specReplicasPath": ".", "statusReplicasPath": ".status"}}))
for cols in [[{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}], [{"name": "", "type": "string", "jsonPath": ".spec.s"}],
             [{"name": "S", "type": "bogus", "jsonPath": ".spec.s"}], [{"name": "S", "type": "", "jsonPath": ".spec.s"}], [{"name": "S", "type": "string", "jsonPath": "spec.s"}], [{"name": "S", "type": "string", "jsonPath": ".spec.s", "format": "bogus"}],
             [{"name": "S", "type": "string", "jsonPath": ".spec.s", "priority": -1}], [{"name": "S", "type": "string", "jsonPath": ".spec[*].s"}], [{"name": "S", "type": "string", "jsonPath": ""}],
             [{"name": "S", "type": "string", "jsonPath": ".spec.s"}, {"name": "S", "type": "string", "jsonPath": ".spec.s"}], [{"name": "S", "type": "integer", "jsonPath": ".spec.{x}"}]]:
    cases.append(ver(additionalPrinterColumns=cols))
# Two versions: the same bad column and scale in both (the CRD's own), then different ones
# (each version's own).
for same in [True, False]:
    c = copy.deepcopy(base); v2 = copy.deepcopy(vs); v2["name"] = "v2"; v2["storage"] = False
    c["spec"]["versions"][0]["additionalPrinterColumns"] = [{"name": "", "type": "bogus", "jsonPath": "x"}]
    c["spec"]["versions"][0]["subresources"] = {"scale": {"specReplicasPath": "x", "statusReplicasPath": ".spec.r"}}
    if same:
        v2["additionalPrinterColumns"] = copy.deepcopy(c["spec"]["versions"][0]["additionalPrinterColumns"])
        v2["subresources"] = copy.deepcopy(c["spec"]["versions"][0]["subresources"])
    else:
        v2["additionalPrinterColumns"] = [{"name": "B", "type": "string", "jsonPath": ".spec.s", "format": "uuid"}]
    c["spec"]["versions"].append(v2)
    cases.append(c)
cases.append(v(["spec", "conversion"], {"strategy": "None"}))
cases.append(v(["spec", "conversion"], {"strategy": "Webhook"}))
cases.append(v(["spec", "conversion"], {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://x/y"}}}))
cases.append(v(["spec", "conversion"], {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v9", "V1", "v9"], "clientConfig": {"url": "https://x/y"}}}))
cases.append(v(["spec", "conversion"], {"strategy": "Webhook", "webhook": {"conversionReviewVersions": [], "clientConfig": {}}}))
cases.append(v(["spec", "conversion"], {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1beta1"], "clientConfig": {"url": "https://x/y", "service": {"name": "s", "namespace": "n"}}}}))
cases.append(v(["spec", "conversion"], {"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://x/y"}}}))
cases.append(v(["spec", "conversion"], {"strategy": "Bogus"}))
cases.append(v(["spec", "conversion"], {"strategy": ""}))
cases.append(ver(storage=False))
cases.append(ver(storage=False, deprecated=True, deprecationWarning="old \"one\""))
c = copy.deepcopy(base); c["spec"]["versions"].append(copy.deepcopy(vs)); cases.append(c)
c = copy.deepcopy(base); v2 = copy.deepcopy(vs); v2["name"] = "v2"; c["spec"]["versions"].append(v2); cases.append(c)
c = copy.deepcopy(base); v2 = copy.deepcopy(vs); v2["name"] = "v2"; v2["storage"] = False; c["spec"]["versions"][0]["storage"] = False; c["spec"]["versions"].append(v2); cases.append(c)
c = copy.deepcopy(base); v2 = copy.deepcopy(vs); v2["name"] = "v2"; v2["served"] = False; v2["storage"] = False; c["spec"]["versions"].append(v2); cases.append(c)
cases.append(v(["spec", "preserveUnknownFields"], True))
c = copy.deepcopy(base); c["status"] = {"storedVersions": ["v0"]}; cases.append(c)
for approval in [None, "", "unapproved, experimental", "https://github.com/kubernetes/enhancements/pull/1111", "not a url", "http://"]:
    c = copy.deepcopy(base); c["spec"]["group"] = "x.k8s.io"; c["metadata"]["name"] = "things.x.k8s.io"
    if approval is not None:
        c["metadata"]["annotations"] = {"api-approved.kubernetes.io": approval}
    cases.append(c)
cases.append(ver(served=False))
with open("crds.yaml", "w") as fh:
    fh.write("# Written by generate.py (YAML documents in JSON form).\n")
    for c in cases:
        fh.write(json.dumps(c) + "\n---\n")
