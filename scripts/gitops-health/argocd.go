package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The argocd-cm keys of the SchemaAudit customization ("<group>_<kind>" names the kind).
const (
	argoHealthKey   = "resource.customizations.health.crd-audit.dev_SchemaAudit"
	argoOpenLibsKey = "resource.customizations.useOpenLibs.crd-audit.dev_SchemaAudit"
)

// The health statuses Argo CD accepts from a script; any other is reported as Unknown.
var argoHealthStatuses = map[string]bool{
	"Unknown": true, "Progressing": true, "Suspended": true,
	"Healthy": true, "Degraded": true, "Missing": true,
}

// argoScript is the health check as Argo CD would load it from argocd-cm.
type argoScript struct {
	source      string
	useOpenLibs bool
}

func readArgoConfigMap(path string) (*argoScript, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	for _, u := range objs {
		if u.GetKind() != "ConfigMap" {
			continue
		}
		data, _, err := unstructured.NestedStringMap(u.Object, "data")
		if err != nil {
			return nil, fmt.Errorf("%s: data: %w", path, err)
		}
		src, ok := data[argoHealthKey]
		if !ok || strings.TrimSpace(src) == "" {
			continue
		}
		s := &argoScript{source: src}
		if v, ok := data[argoOpenLibsKey]; ok {
			// Argo CD parses the value with strconv.ParseBool too.
			if s.useOpenLibs, err = strconv.ParseBool(v); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, argoOpenLibsKey, err)
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s: no ConfigMap with data key %s", path, argoHealthKey)
}

// HealthStatus is what a health script returns (Argo CD's health.HealthStatus).
type HealthStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// run executes the script against one object in the environment Argo CD's application
// controller gives a health customization from argocd-cm (util/lua in argo-cd):
//   - unless useOpenLibs is set, none of gopher-lua's standard libraries is opened except
//     the package library, the base functions and the table library (so no `string`,
//     `math` or `io`, and strings have no methods);
//   - `os` is not a global: require("os") returns a module with only time and date;
//   - the object is the global `obj` (a Lua table; numbers are Lua numbers, null is nil);
//   - the script runs under a one-second deadline;
//   - the value left on top of the stack is the result: a table holding `status` and
//     `message` strings, or nil.
func (s *argoScript) run(obj *unstructured.Unstructured) (HealthStatus, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: !s.useOpenLibs})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.OsLibName, openArgoOs},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return HealthStatus{}, fmt.Errorf("opening Lua library %q: %w", lib.name, err)
		}
	}
	L.PreloadModule(lua.OsLibName, loadArgoOs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	L.SetContext(ctx)
	// Argo CD also sets an empty `actionParams` table for every script.
	L.SetGlobal("actionParams", L.NewTable())
	L.SetGlobal("obj", toLua(L, obj.Object))

	fn, err := L.LoadString(s.source)
	if err != nil {
		return HealthStatus{}, err
	}
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Type == lua.ApiErrorRun {
			apiErr.StackTrace = ""
		}
		return HealthStatus{}, err
	}
	return healthFromLua(L.Get(-1))
}

// healthFromLua reads the script's result as Argo CD does: it encodes the table as JSON
// and decodes that into {status, message}. A table that encodes as a JSON array (an empty
// table, a list) or whose status or message is not a string fails to decode with a type
// error, which Argo CD turns into an empty health status; a status outside the known
// codes becomes Unknown with a fixed message.
func healthFromLua(v lua.LValue) (HealthStatus, error) {
	switch t := v.(type) {
	case *lua.LNilType:
		return HealthStatus{}, nil
	case *lua.LTable:
		if t.Len() > 0 {
			return HealthStatus{}, nil // a JSON array
		}
		var h HealthStatus
		hasKey, bad := false, false
		t.ForEach(func(k, val lua.LValue) {
			ks, ok := k.(lua.LString)
			if !ok {
				return
			}
			hasKey = true
			field := map[string]*string{"status": &h.Status, "message": &h.Message}[string(ks)]
			if field == nil {
				return
			}
			switch x := val.(type) {
			case lua.LString:
				*field = string(x)
			case *lua.LNilType:
			default:
				bad = true
			}
		})
		if !hasKey || bad {
			return HealthStatus{}, nil
		}
		if !argoHealthStatuses[h.Status] {
			return HealthStatus{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
		}
		return h, nil
	default:
		return HealthStatus{}, fmt.Errorf("expect table output from Lua script, not %s", v.Type())
	}
}

// toLua converts an unstructured value the way Argo CD hands objects to scripts.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case int64:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, item := range x {
			t.Append(toLua(L, item))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, item := range x {
			t.RawSetH(lua.LString(k), toLua(L, item))
		}
		return t
	default:
		return lua.LNil
	}
}

// The two `os` functions Argo CD lets scripts have.
var argoOsFuncs = map[string]lua.LGFunction{"time": luaOsTime, "date": luaOsDate}

// openArgoOs is what Argo CD opens under the name "os": a registration under the module
// name "table", which the table library has taken already, so it adds nothing (there is no
// global `os`; scripts get time and date through require("os")).
func openArgoOs(L *lua.LState) int {
	L.Push(L.RegisterModule(lua.TabLibName, argoOsFuncs))
	return 1
}

// loadArgoOs is the preloaded module require("os") returns.
func loadArgoOs(L *lua.LState) int {
	L.Push(L.SetFuncs(L.NewTable(), argoOsFuncs))
	return 1
}

// luaOsTime: os.time() is now in Unix seconds; os.time{year=,month=,day=,hour=,min=,sec=}
// is that local time.
func luaOsTime(L *lua.LState) int {
	if L.GetTop() == 0 {
		L.Push(lua.LNumber(time.Now().Unix()))
		return 1
	}
	t := L.CheckTable(1)
	field := func(name string, def int) int {
		if n, ok := t.RawGetString(name).(lua.LNumber); ok {
			return int(n)
		}
		return def
	}
	at := time.Date(field("year", -1), time.Month(field("month", -1)), field("day", -1),
		field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local)
	L.Push(lua.LNumber(at.Unix()))
	return 1
}

// luaOsDate: os.date([format [, time]]), local time or UTC with a leading "!", formats
// %Y %m %d %H %M %S %c %x %X %p %y %%, or "*t" for a table.
func luaOsDate(L *lua.LState) int {
	format := L.OptString(1, "%c")
	at := time.Now()
	if L.GetTop() >= 2 {
		at = time.Unix(int64(L.CheckNumber(2)), 0)
	}
	if strings.HasPrefix(format, "!") {
		at = at.UTC()
		format = format[1:]
	} else {
		at = at.Local()
	}
	if format == "*t" {
		t := L.NewTable()
		for k, v := range map[string]int{
			"year": at.Year(), "month": int(at.Month()), "day": at.Day(), "hour": at.Hour(),
			"min": at.Minute(), "sec": at.Second(), "wday": int(at.Weekday()) + 1, "yday": at.YearDay(),
		} {
			t.RawSetString(k, lua.LNumber(v))
		}
		t.RawSetString("isdst", lua.LFalse)
		L.Push(t)
		return 1
	}
	layouts := map[byte]string{
		'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'H': "15", 'M': "04", 'S': "05",
		'p': "PM", 'c': "Mon Jan  2 15:04:05 2006", 'x': "01/02/06", 'X': "15:04:05",
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		if format[i] == '%' {
			b.WriteByte('%')
		} else if layout, ok := layouts[format[i]]; ok {
			b.WriteString(at.Format(layout))
		} else {
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// The health_test.yaml layout of Argo CD's built-in checks (resource_customizations/).
type argoTests struct {
	Tests []struct {
		InputPath    string       `json:"inputPath"`
		HealthStatus HealthStatus `json:"healthStatus"`
	} `json:"tests"`
}

// runArgoLua checks the argocd-cm script against TESTDIR/health_test.yaml (and that
// TESTDIR/health.lua, if there, is the same script), or prints its verdict on objects.
func runArgoLua(args []string) error {
	if len(args) < 2 {
		return usageError("argocd-lua needs ARGOCD_CM_YAML and TESTDIR, or --print FILE...")
	}
	script, err := readArgoConfigMap(args[0])
	if err != nil {
		return err
	}
	if args[1] == "--print" {
		if len(args) < 3 {
			return usageError("argocd-lua --print needs FILE...")
		}
		return printArgoHealth(script, args[2:])
	}
	if len(args) != 2 {
		return usageError("argocd-lua takes ARGOCD_CM_YAML TESTDIR")
	}
	return testArgoHealth(script, args[0], args[1])
}

func printArgoHealth(script *argoScript, files []string) error {
	failures := 0
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return err
		}
		for _, u := range objs {
			h, err := script.run(u)
			if err != nil {
				failures++
				fmt.Fprintf(os.Stderr, "%s: %s: Lua error: %v\n", f, objectName(u), err)
				continue
			}
			printLine(Line{Name: objectName(u), Status: h.Status, Message: h.Message})
		}
	}
	if failures > 0 {
		return fmt.Errorf("the script failed on %d object(s)", failures)
	}
	return nil
}

func testArgoHealth(script *argoScript, cmPath, dir string) error {
	failed, passed := 0, 0
	luaPath := filepath.Join(dir, "health.lua")
	if b, err := os.ReadFile(luaPath); err == nil {
		if string(b) != script.source {
			failed++
			fmt.Printf("MISMATCH %s differs from the %s key of %s%s\n",
				luaPath, argoHealthKey, cmPath, firstDifference(string(b), script.source))
		} else {
			passed++
			fmt.Printf("ok %s is the script of %s\n", luaPath, cmPath)
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	testFile := filepath.Join(dir, "health_test.yaml")
	b, err := os.ReadFile(testFile)
	if err != nil {
		return err
	}
	var tests argoTests
	if err := yaml.UnmarshalStrict(b, &tests); err != nil {
		return fmt.Errorf("%s: %w", testFile, err)
	}
	if len(tests.Tests) == 0 {
		return fmt.Errorf("%s: no tests", testFile)
	}
	for _, tc := range tests.Tests {
		obj, err := readOne(filepath.Join(dir, tc.InputPath))
		if err != nil {
			return err
		}
		got, err := script.run(obj)
		switch {
		case err != nil:
			failed++
			fmt.Printf("MISMATCH %s: Lua error: %v\n", tc.InputPath, err)
		case got != tc.HealthStatus:
			failed++
			fmt.Printf("MISMATCH %s: got {status: %q, message: %q}, want {status: %q, message: %q}\n",
				tc.InputPath, got.Status, got.Message, tc.HealthStatus.Status, tc.HealthStatus.Message)
		default:
			passed++
			fmt.Printf("ok %s: %s\n", tc.InputPath, got.Status)
		}
	}
	fmt.Printf("argocd-lua: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	return nil
}

// firstDifference names the first line where two texts differ.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf(" (first at line %d: %q vs %q)", i+1, x, y)
		}
	}
	return ""
}
