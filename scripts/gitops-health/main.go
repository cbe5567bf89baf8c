// Command gitops-health evaluates crd-audit's SchemaAudit reports the way GitOps tools do:
//
//	gitops-health kstatus [--expect FILE] [FILE...]
//	    kstatus's status.Compute (sigs.k8s.io/cli-utils), as `kubectl`-style waiters,
//	    Config Sync, kpt and Flux without healthCheckExprs compute it.
//	gitops-health argocd-lua ARGOCD_CM_YAML TESTDIR
//	gitops-health argocd-lua ARGOCD_CM_YAML --print FILE...
//	    the Lua health check of an argocd-cm ConfigMap, run with gopher-lua in the
//	    environment Argo CD gives a resource customization.
//	gitops-health flux-cel KUSTOMIZATION_YAML [--expect FILE] [FILE...]
//	    a Flux Kustomization's spec.healthCheckExprs, evaluated by Flux's own code
//	    (github.com/fluxcd/pkg/runtime/cel, the package kustomize-controller uses).
//
// Every FILE holds one or more YAML or JSON documents; a document whose kind ends in
// "List" contributes its items. Each evaluated object prints one JSON line
// {"name":..,"status":..,"message":..}. A mismatch against expectations, an unreadable
// file or a script error makes the exit code 1; a usage error makes it 2.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

const usage = `usage:
  gitops-health kstatus [--expect FILE] [FILE...]
  gitops-health argocd-lua ARGOCD_CM_YAML TESTDIR
  gitops-health argocd-lua ARGOCD_CM_YAML --print FILE...
  gitops-health flux-cel KUSTOMIZATION_YAML [--expect FILE] [FILE...]
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "kstatus":
		err = runKstatus(args)
	case "argocd-lua":
		err = runArgoLua(args)
	case "flux-cel":
		err = runFluxCEL(args)
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown subcommand %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gitops-health %s: %v\n", os.Args[1], err)
		if _, ok := err.(usageError); ok {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a mistake in the command line (exit code 2).
type usageError string

func (e usageError) Error() string { return string(e) }

// Line is what each evaluated object prints.
type Line struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func printLine(l Line) {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

// splitExpect takes `--expect FILE` out of args.
func splitExpect(args []string) (expect string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--expect":
			if i+1 >= len(args) {
				return "", nil, usageError("--expect needs a FILE")
			}
			expect = args[i+1]
			i++
		default:
			rest = append(rest, args[i])
		}
	}
	return expect, rest, nil
}
