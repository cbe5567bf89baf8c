// cel-cost-oracle: the runtime cost the upstream code charges for a schema's CEL rules on a
// value (the expectations of crates/crd-audit-engine/src/cel/runtime_cost_tests.rs).
//
// Usage (with the oracle's Go toolchain, see ../shared/oracle/env.sh):
//
//	. ../shared/oracle/env.sh && go run scripts/cel-cost-oracle/main.go SCHEMA.json VALUE.json
//
// SCHEMA.json is an openAPIV3Schema with x-kubernetes-validations rules, VALUE.json the value
// it validates. It runs apiextensions-apiserver's CEL validator (no per-call limit) with a huge
// budget and prints `cost N`, what the validation took from the budget, then the errors.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func main() {
	sb, _ := os.ReadFile(os.Args[1])
	vb, _ := os.ReadFile(os.Args[2])
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(sb, &v1); err != nil {
		panic(err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &internal, nil); err != nil {
		panic(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		panic(err)
	}
	var obj interface{}
	if err := utiljson.Unmarshal(vb, &obj); err != nil {
		panic(err)
	}
	val := cel.NewValidator(s, true, uint64(1)<<50)
	const budget = int64(1) << 50
	errs, rem := val.Validate(context.Background(), field.NewPath("root"), s, obj, nil, budget)
	fmt.Printf("cost %d\n", budget-rem)
	for _, e := range errs {
		fmt.Println(e.Error())
	}
}
