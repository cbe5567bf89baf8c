// cel-env-oracle: what CRD create validation says of CRDs on a given Kubernetes release, for
// the CEL environment of that release, computed with the upstream Go code (the expectations
// of tests/data/check-releases/).
//
// Usage (with the oracle's Go toolchain, see ../shared/oracle/env.sh):
//
//	. ../shared/oracle/env.sh && go run scripts/cel-env-oracle/main.go 1.N CRDS.yaml
//
// (tests/data/check-releases/regen.sh builds it into a temporary directory and runs it for
// every release there.)
//
// For each CustomResourceDefinition document of CRDS.yaml it prints a JSON line: the CRD's
// name, the release, the response code (201 or 422) and the errors of the create
// (crdErrors: field, type, detail, badValue, message), as `oracle structural` does.
//
// How a 1.N server is reproduced with the 1.36 sources: a server compiles the rules of a new
// CRD in the "NewExpressions" CEL environment of its compatibility version,
// environment.DefaultCompatibilityVersion(), the MinCompatibilityVersion of the kube
// component's effective version, which a binary of version 1.N sets to 1.(N-1). The tool
// sets that version on the effective version of the DefaultComponentGlobalsRegistry
// (SetMinCompatibilityVersion stores it as given; setting the emulation version instead
// would clamp the compatibility version to the binary's floor, 1.33, so that 1.27..1.33
// could not be reached), then runs the CRD strategy's Validate as the server does: the
// validation builds environment.MustBaseEnvSet(DefaultCompatibilityVersion()) itself, so
// every option of the base environment is filtered by its IntroducedVersion/RemovedVersion
// exactly as on that release. The feature gates are also set to emulate 1.N (with the same
// compatibility version), because the new-expressions environment includes a library
// behind a feature gate whenever the gate is on (AuthorizeWithSelectors: off before 1.32),
// whatever the compatibility version.
//
// What this cannot reproduce: the cel-go and Kubernetes code of the old release itself
// (messages are those of the 1.36 sources), and the stored-expressions environment of an old
// binary (the 1.36 binary's holds every library, whatever the version).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	sigsyaml "sigs.k8s.io/yaml"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	install.Install(scheme)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Group: "", Version: "v1"})
}

type jsonErr struct {
	Field    string      `json:"field"`
	Type     string      `json:"type"`
	Detail   string      `json:"detail"`
	BadValue interface{} `json:"badValue,omitempty"`
	Message  string      `json:"message"`
}

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "cel-env-oracle: "+format+"\n", args...)
	os.Exit(2)
}

// setRelease makes the process judge as a server of release 1.minor would.
func setRelease(minor uint) {
	release := version.MajorMinor(1, minor)
	compat := version.MajorMinor(1, minor-1)
	ev, ok := compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).(basecompatibility.MutableEffectiveVersion)
	if !ok {
		die("the kube component's effective version cannot be changed")
	}
	ev.SetMinCompatibilityVersion(compat)
	if err := utilfeature.DefaultMutableFeatureGate.SetEmulationVersionAndMinCompatibilityVersion(release, compat); err != nil {
		die("feature gates at %s: %v", release, err)
	}
}

func documents(path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		die("%v", err)
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return docs
		}
		if err != nil {
			die("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := sigsyaml.YAMLToJSON(doc)
		if err != nil {
			die("%s: %v", path, err)
		}
		var tm metav1.TypeMeta
		if json.Unmarshal(j, &tm) == nil && tm.Kind == "CustomResourceDefinition" {
			docs = append(docs, j)
		}
	}
}

func main() {
	if len(os.Args) != 3 {
		die("usage: cel-env-oracle 1.N CRDS.yaml")
	}
	parts := strings.Split(strings.TrimPrefix(os.Args[1], "v"), ".")
	minor, err := strconv.ParseUint(parts[len(parts)-1], 10, 32)
	if len(parts) != 2 || parts[0] != "1" || err != nil || minor < 1 {
		die("release %q: expected 1.N", os.Args[1])
	}
	setRelease(uint(minor))
	ctx := context.Background()
	st := customresourcedefinition.NewStrategy(scheme)
	for _, raw := range documents(os.Args[2]) {
		obj, _, err := codecs.UniversalDecoder(apiextensions.SchemeGroupVersion).Decode(raw, nil, nil)
		if err != nil {
			die("decoding CRD: %v", err)
		}
		crd := obj.(*apiextensions.CustomResourceDefinition)
		st.PrepareForCreate(ctx, crd)
		errs := st.Validate(ctx, crd)
		out := map[string]interface{}{
			"crd":       crd.Name,
			"release":   fmt.Sprintf("1.%d", minor),
			"crdErrors": toJSON(errs),
			"code":      201,
		}
		if len(errs) > 0 {
			out["code"] = 422
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			die("encode: %v", err)
		}
		os.Stdout.Write(buf.Bytes())
	}
}

func toJSON(errs field.ErrorList) []jsonErr {
	out := make([]jsonErr, 0, len(errs))
	for _, e := range errs {
		je := jsonErr{Field: e.Field, Type: string(e.Type), Detail: e.Detail, Message: e.Error()}
		if e.BadValue != nil && e.BadValue != (field.OmitValueType{}) {
			if _, err := json.Marshal(e.BadValue); err == nil {
				je.BadValue = e.BadValue
			} else {
				je.BadValue = fmt.Sprintf("%v", e.BadValue)
			}
		}
		out = append(out, je)
	}
	return out
}
