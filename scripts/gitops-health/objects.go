package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// readObjects reads every object of a YAML or JSON file: each document, and the items of a
// document whose kind ends in "List". Whole numbers become int64, as in objects read from
// an API server (kstatus reads metadata.generation and status.observedGeneration as int64
// and fails on a float64).
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	docs := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var out []*unstructured.Unstructured
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, n, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		m, err := decodeMap(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, n, err)
		}
		if m == nil {
			continue
		}
		kind, _ := m["kind"].(string)
		if items, ok := m["items"].([]any); ok && strings.HasSuffix(kind, "List") {
			for i, it := range items {
				im, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s: document %d: items[%d] is not an object", path, n, i)
				}
				out = append(out, &unstructured.Unstructured{Object: im})
			}
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// decodeMap turns one YAML or JSON document into a map, numbers as in unstructured objects.
func decodeMap(doc []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
		return nil, nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// stripComments drops whole-line YAML comments (a document of comments alone is empty).
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readOne reads a file that must hold exactly one object.
func readOne(path string) (*unstructured.Unstructured, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s: want exactly one object, found %d", path, len(objs))
	}
	return objs[0], nil
}

// objectName is "name", or "namespace/name" for a namespaced object.
func objectName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

// Expectations is the file `--expect` reads (kstatus and flux-cel): one case per input
// file, paths relative to the expectations file. `status` is what flux-cel must compute,
// `kstatus` what kstatus must compute; a case may give either or both.
//
//	tests:
//	  - inputPath: testdata/clean.yaml
//	    status: Current
//	    kstatus: Current
//	    kstatusMessage: Resource is Ready   # optional
type Expectations struct {
	Tests []ExpectedCase `json:"tests"`
}

// ExpectedCase is one input file and the statuses it must get.
type ExpectedCase struct {
	InputPath      string  `json:"inputPath"`
	Status         string  `json:"status,omitempty"`
	Kstatus        string  `json:"kstatus,omitempty"`
	KstatusMessage *string `json:"kstatusMessage,omitempty"`
}

func readExpectations(path string) (*Expectations, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e Expectations
	if err := yaml.UnmarshalStrict(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(e.Tests) == 0 {
		return nil, fmt.Errorf("%s: no tests", path)
	}
	return &e, nil
}

// resolve makes a path of an expectations file relative to the working directory.
func resolve(expectFile, input string) string {
	if filepath.IsAbs(input) {
		return input
	}
	return filepath.Join(filepath.Dir(expectFile), input)
}
