// size-oracle: the sizes `crd-audit check` reports, computed with the upstream Go code, for
// the test expectations in tests/data/size_limits/expected.json.
//
// Usage (with the oracle's Go toolchain, see ../shared/oracle/env.sh):
//
//	. ../shared/oracle/env.sh && go run scripts/size-oracle/main.go CRD.yaml...
//
// For each CRD file (one document) it prints a JSON line with
//   - requestBody: the body `kubectl create` / `kubectl apply --server-side` sends (the
//     object decoded as kubectl decodes it, encoded by unstructured.UnstructuredJSONScheme);
//   - lastAppliedAnnotation / annotationsWithLastApplied: the value client-side apply writes
//     (kubectl GetModifiedConfiguration's steps: annotations minus the last-applied one, kept
//     as a map, the object encoded by UnstructuredJSONScheme) and len(key)+len(value) over the
//     annotations of the resulting object;
//   - storedProtobuf (apiextensions.k8s.io/v1 documents only): the protobuf bytes kube-apiserver stores on create: the request decoded
//     into apiextensions/v1 with defaults, the create strategy's status/generation, a UID and
//     creation timestamp, no managedFields, encoded by the protobuf serializer.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func main() {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	codecs := serializer.NewCodecFactory(scheme)
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			panic(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			panic(err)
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
		if err != nil {
			panic(err)
		}
		u := obj.(*unstructured.Unstructured)
		body, err := runtime.Encode(unstructured.UnstructuredJSONScheme, u)
		if err != nil {
			panic(err)
		}

		// Client-side apply's annotation.
		c := u.DeepCopy()
		annots := c.GetAnnotations()
		if annots == nil {
			annots = map[string]string{}
		}
		delete(annots, lastApplied)
		c.SetAnnotations(annots)
		modified, err := runtime.Encode(unstructured.UnstructuredJSONScheme, c)
		if err != nil {
			panic(err)
		}
		annots[lastApplied] = string(modified)
		total := 0
		for k, v := range annots {
			total += len(k) + len(v)
		}

		line := map[string]interface{}{
			"file":                       path,
			"requestBody":                len(body),
			"lastAppliedAnnotation":      len(modified),
			"annotationsWithLastApplied": total,
			"storedProtobuf":             nil, // only for apiextensions.k8s.io/v1 documents
		}
		if u.GetAPIVersion() != "apiextensions.k8s.io/v1" {
			out, _ := json.Marshal(line)
			fmt.Println(string(out))
			continue
		}

		// The stored object.
		typed := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DecodeInto(codecs.UniversalDecoder(apiextensionsv1.SchemeGroupVersion), body, typed); err != nil {
			panic(err)
		}
		scheme.Default(typed)
		typed.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		for _, v := range typed.Spec.Versions {
			if v.Storage {
				typed.Status.StoredVersions = append(typed.Status.StoredVersions, v.Name)
				break
			}
		}
		typed.Generation = 1
		typed.UID = types.UID("0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
		typed.CreationTimestamp = metav1.NewTime(time.Unix(1770000000, 0))
		typed.ResourceVersion = ""
		typed.SelfLink = ""
		typed.Namespace = ""
		typed.ManagedFields = nil
		typed.DeletionTimestamp = nil
		typed.DeletionGracePeriodSeconds = nil
		typed.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		var stored bytes.Buffer
		if err := protobuf.NewSerializer(scheme, scheme).Encode(typed, &stored); err != nil {
			panic(err)
		}

		line["storedProtobuf"] = stored.Len()
		out, _ := json.Marshal(line)
		fmt.Println(string(out))
	}
}
