# The CRDs of tests/data/size_limits/thresholds.jsonl: python3 big-crd.py N... writes big-N.json
# (a CRD whose schema description is N bytes), measured with size-oracle.
import json, sys
def crd(n):
    return {"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"bigs.example.com"},"spec":{"group":"example.com","names":{"kind":"Big","plural":"bigs"},"scope":"Namespaced","versions":[{"name":"v1","served":True,"storage":True,"schema":{"openAPIV3Schema":{"type":"object","description":"a"*n}}}]}}
for n in sys.argv[1:]:
    open(f"big-{n}.json","w").write(json.dumps(crd(int(n)),sort_keys=True,separators=(',',':')))
