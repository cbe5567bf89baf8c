package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// runKstatus prints kstatus's verdict on each object; with --expect it also checks the
// `kstatus` (and `kstatusMessage`) of each case.
func runKstatus(args []string) error {
	expect, files, err := splitExpect(args)
	if err != nil {
		return err
	}
	if expect == "" && len(files) == 0 {
		return usageError("kstatus needs FILE... or --expect FILE")
	}
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return err
		}
		for _, u := range objs {
			l, err := kstatusLine(u)
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
		if c.Kstatus == "" {
			continue
		}
		path := resolve(expect, c.InputPath)
		u, err := readOne(path)
		if err != nil {
			return err
		}
		got, err := kstatusLine(u)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		checked++
		switch {
		case got.Status != c.Kstatus:
			mismatches++
			fmt.Printf("MISMATCH %s: kstatus %s (%q), want %s\n", c.InputPath, got.Status, got.Message, c.Kstatus)
		case c.KstatusMessage != nil && got.Message != *c.KstatusMessage:
			mismatches++
			fmt.Printf("MISMATCH %s: kstatus message %q, want %q\n", c.InputPath, got.Message, *c.KstatusMessage)
		default:
			fmt.Printf("ok %s: %s\n", c.InputPath, got.Status)
		}
	}
	fmt.Printf("kstatus: %d passed, %d failed\n", checked-mismatches, mismatches)
	if mismatches > 0 {
		return fmt.Errorf("%d of %d cases differ", mismatches, checked)
	}
	return nil
}

func kstatusLine(u *unstructured.Unstructured) (Line, error) {
	r, err := status.Compute(u)
	if err != nil {
		return Line{}, err
	}
	return Line{Name: objectName(u), Status: string(r.Status), Message: r.Message}, nil
}
