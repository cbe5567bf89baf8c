package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/fluxcd/pkg/apis/kustomize"
	fluxcel "github.com/fluxcd/pkg/runtime/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The part of a kustomize.toolkit.fluxcd.io Kustomization this command reads.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs"`
	} `json:"spec"`
}

// fluxEvaluator computes what kustomize-controller's health check sees for an object of a
// kind that spec.healthCheckExprs names. It is Flux's own code end to end:
// kustomize-controller calls cel.NewStatusReader(obj.Spec.HealthCheckExprs) and gives the
// reader to its kstatus poller, which calls ReadStatusForObject on each object it reads.
// Here the object comes from a file instead of the API server; the reader needs neither a
// REST mapper nor a cluster reader for ReadStatusForObject.
type fluxEvaluator struct {
	reader interface {
		Supports(schema.GroupKind) bool
	}
	read func(ctx context.Context, u *unstructured.Unstructured) (Line, error)
}

func newFluxEvaluator(path string) (*fluxEvaluator, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := yaml.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if k.Kind != "Kustomization" || !strings.HasPrefix(k.APIVersion, "kustomize.toolkit.fluxcd.io/") {
		return nil, fmt.Errorf("%s: not a kustomize.toolkit.fluxcd.io Kustomization (%s %s)", path, k.APIVersion, k.Kind)
	}
	if len(k.Spec.HealthCheckExprs) == 0 {
		return nil, fmt.Errorf("%s: spec.healthCheckExprs is empty", path)
	}
	factory, err := fluxcel.NewStatusReader(k.Spec.HealthCheckExprs)
	if err != nil {
		// What kustomize-controller reports as a terminal InvalidCELExpression.
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	reader := factory(nil)
	return &fluxEvaluator{
		reader: reader,
		read: func(ctx context.Context, u *unstructured.Unstructured) (Line, error) {
			rs, err := reader.ReadStatusForObject(ctx, nil, u)
			if err != nil {
				return Line{}, err
			}
			l := Line{Name: objectName(u), Status: string(rs.Status), Message: rs.Message}
			if rs.Error != nil {
				// An expression that fails to evaluate: Flux keeps the Unknown status and
				// polls again until the Kustomization's timeout.
				l.Message = rs.Error.Error()
			}
			return l, nil
		},
	}, nil
}

func (f *fluxEvaluator) supports(u *unstructured.Unstructured) bool {
	return f.reader.Supports(u.GroupVersionKind().GroupKind())
}

// runFluxCEL prints Flux's verdict on each object whose kind healthCheckExprs names; with
// --expect it also checks the `status` of each case.
func runFluxCEL(args []string) error {
	if len(args) == 0 {
		return usageError("flux-cel needs KUSTOMIZATION_YAML")
	}
	expect, files, err := splitExpect(args[1:])
	if err != nil {
		return err
	}
	if expect == "" && len(files) == 0 {
		return usageError("flux-cel needs FILE... or --expect FILE")
	}
	ev, err := newFluxEvaluator(args[0])
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return err
		}
		for _, u := range objs {
			if !ev.supports(u) {
				fmt.Fprintf(os.Stderr, "%s: %s %s: no healthCheckExprs for this kind (Flux uses kstatus for it)\n",
					f, u.GetKind(), objectName(u))
				continue
			}
			l, err := ev.read(ctx, u)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", f, objectName(u), err)
			}
			printLine(l)
		}
	}
	if expect == "" {
		return nil
	}
	e, err := readExpectations(expect)
	if err != nil {
		return err
	}
	mismatches, checked := 0, 0
	for _, c := range e.Tests {
		if c.Status == "" {
			continue
		}
		path := resolve(expect, c.InputPath)
		u, err := readOne(path)
		if err != nil {
			return err
		}
		if !ev.supports(u) {
			return fmt.Errorf("%s: healthCheckExprs name no expressions for %s", path, u.GroupVersionKind())
		}
		got, err := ev.read(ctx, u)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		checked++
		if got.Status != c.Status {
			mismatches++
			fmt.Printf("MISMATCH %s: %s (%q), want %s\n", c.InputPath, got.Status, got.Message, c.Status)
			continue
		}
		fmt.Printf("ok %s: %s\n", c.InputPath, got.Status)
	}
	fmt.Printf("flux-cel: %d passed, %d failed\n", checked-mismatches, mismatches)
	if mismatches > 0 {
		return fmt.Errorf("%d of %d cases differ", mismatches, checked)
	}
	return nil
}
