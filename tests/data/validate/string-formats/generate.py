# Writes crd.yaml and objects.yaml of this case: one CRD with a string field per format that
# kube-apiserver 1.36 validates, and objects setting one field each to a value from a list of
# tricky strings (and random edits of them, fixed seed). Run from this directory; then
# ../regen.sh string-formats. A differential run of these found that Go 1.26's net.ParseMAC
# takes MAC addresses without separators.
import json, random
random.seed(7)
formats=["bsonobjectid","uri","email","hostname","ipv4","ipv6","cidr","mac","uuid","uuid3","uuid4","uuid5","isbn","isbn10","isbn13","creditcard","ssn","hexcolor","rgbcolor","byte","password","date","duration","date-time","k8s-short-name","k8s-long-name"]
seeds=["", " ", "a", "A", "0", "-", "1.2.3.4", "01.2.3.4", "1.2.3.256", "::1", "::ffff:1.2.3.4", "fe80::1%eth0", "1:2:3:4:5:6:7:8", "1::2::3", "10.0.0.0/8", "10.0.0.0/08", "::/0", "1.2.3.4/33",
"00:11:22:33:44:55", "00-11-22-33-44-55", "0011.2233.4455", "00:11:22:33:44:55:66:77", "00:11:22:33:44:5g",
"123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-32d3-a456-426614174000", "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-52d3-9456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "123e4567e89b12d3a456426614174000",
"0-306-40615-2", "0306406152", "030640615X", "978-0-306-40615-7", "9780306406157", "978 0 306 40615 7",
"4111111111111111", "4111-1111-1111-1111", "4111111111111112", "378282246310005", "6011111111111117",
"123-45-6789", "123456789", "123 45 6789", "#fff", "fff", "#ffff", "#GGG", "rgb(0,0,0)", "rgb(255, 255, 255)", "rgb(256,0,0)", "rgb( 0,0,0)",
"aGVsbG8=", "aGVsbG8", "aGVs bG8=", "aGVsbG8=\n", "====",
"2020-01-01", "2020-02-30", "2020-1-1", "20200101", "2020-01-01T00:00:00Z", "2020-01-01t00:00:00z", "2020-01-01T00:00:00", "2020-01-01T00:00:00.123+01:00", "2020-01-01 00:00:00Z", "2020-01-01T24:00:00Z", "2020-01-01T23:59:60Z",
"1h", "1h30m", "-1.5s", "5 hours", "1 day", "3 weeks", "1 fortnight", "1.5 hours", "1hour", "100", "P1D",
"http://example.com", "https://example.com/a b", "example.com", "/rel", "mailto:a@b", "http://[::1]:80/", "http://a/%zz", "://x", "http:", "x:y",
"a@b.c", "A <a@b.c>", "a@b", "@b.c", "a@", "\"a b\"@c.d",
"example.com", "ex_ample.com", "-example.com", "example-.com", "a.b", "localhost", "xn--bcher-kva.example", "例え.jp", "a"*64+".com", "EXAMPLE.COM", "example.com.",
"507f1f77bcf86cd799439011", "507f1f77bcf86cd79943901", "507F1F77BCF86CD799439011",
"abc", "abc-def", "Abc", "abc.def", "a"*63, "a"*64, "a"*253, "a-", "1abc"]
objs=[]
for f in formats:
  vals=list(seeds)
  for _ in range(20):
    s=random.choice(seeds)
    ops=random.randint(1,3)
    for _ in range(ops):
      r=random.random()
      if r<0.3 and s: i=random.randrange(len(s)); s=s[:i]+s[i+1:]
      elif r<0.6: i=random.randrange(len(s)+1); s=s[:i]+random.choice("0aZ:-./@ %_#\u00e9\t9fF")+s[i:]
      elif s: i=random.randrange(len(s)); s=s[:i]+random.choice("0aZ:-./@9")+s[i+1:]
    vals.append(s)
  for v in vals: objs.append((f,v))
props={}
for f in formats: props["f"+f.replace("-","")]={"type":"string","format":f}
crd={"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.example.com"},"spec":{"group":"example.com","names":{"kind":"Thing","plural":"things"},"scope":"Namespaced","versions":[{"name":"v1","served":True,"storage":True,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":props}}}}}]}}
open("crd.yaml","w").write(json.dumps(crd))
with open("objects.yaml","w") as fh:
  fh.write("# Written by generate.py (YAML documents in JSON form).\n")
  for i,(f,v) in enumerate(objs):
    fh.write(json.dumps({"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"o%d"%i},"spec":{"f"+f.replace("-",""):v}})+"\n---\n")
