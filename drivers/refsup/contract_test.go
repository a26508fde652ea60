package refsup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"faultwin/fixtures/refsup/api"
	"faultwin/internal/model"
	"faultwin/internal/strictjson"
)

// The wire contract between refsup and the harness. refsup writes its own
// types (fixtures/refsup/api); the driver decodes its sweep report and its
// fault trace into the harness's (internal/model), which the rows keep and
// every driver shares. Nothing but this test ties the two sides together,
// so it holds every field of each pair to the same JSON on both sides.
// Whatever else the driver reads from refsup (sessions, checkpoints, the
// owned listing, the subreaper's status lines) it decodes into refsup's own
// api type, and TestDecodesIntoContractTypes holds it to that.

// wirePair is one refsup type and the harness type it is decoded into.
type wirePair struct {
	name            string
	refsup, harness reflect.Type
	// harnessOnly are the top-level JSON names the harness sets itself
	// after decoding; refsup never writes them.
	harnessOnly []string
}

var wirePairs = []wirePair{
	{"sweep report", reflect.TypeFor[api.SweepReport](), reflect.TypeFor[model.SweepReport](), []string{"raw"}},
	{"trace point", reflect.TypeFor[api.TracePoint](), reflect.TypeFor[model.TracePoint](), nil},
}

func TestWireContract(t *testing.T) {
	for _, p := range wirePairs {
		t.Run(p.name, func(t *testing.T) {
			for _, problem := range contract(p) {
				t.Error(problem)
			}
		})
	}
}

type (
	nested struct {
		N int `json:"n"`
	}
	killed struct {
		PID  int    `json:"pid"`
		Comm string `json:"comm"`
	}
	// refsupSide is a refsup type as it might be; each case below pairs it
	// with a harness type that drifted from it one way.
	refsupSide struct {
		Run     string   `json:"run"`
		Removed []string `json:"removed"`
		Inner   nested   `json:"inner"`
		Killed  []killed `json:"killed"`
	}
)

// TestContractCatchesDrift: the check names each way two sides can drift,
// by the fields and by a round trip, and finds nothing in a pair that
// agrees.
func TestContractCatchesDrift(t *testing.T) {
	for _, c := range []struct {
		name    string
		harness reflect.Type
		want    []string // what the check must report, each in some problem
	}{
		{"agrees", reflect.TypeFor[struct {
			Run     string          `json:"run"`
			Removed []string        `json:"removed"`
			Inner   nested          `json:"inner"`
			Killed  []killed        `json:"killed"`
			Raw     json.RawMessage `json:"raw,omitempty"` // harness-only: no drift
		}](), nil},
		{"omitempty", reflect.TypeFor[struct {
			Run     string   `json:"run"`
			Removed []string `json:"removed,omitempty"`
			Inner   nested   `json:"inner"`
			Killed  []killed `json:"killed"`
		}](), []string{
			"omitempty.removed: omitempty on the harness side only",
			"omitempty, empty lists: refsup's JSON differs after a round trip through the harness type",
			"omitempty, zero value: refsup's JSON differs after a round trip through the harness type",
		}},
		{"dropped", reflect.TypeFor[struct {
			Run    string   `json:"run"`
			Inner  nested   `json:"inner"`
			Killed []killed `json:"killed"`
		}](), []string{
			"dropped.removed: refsup writes it, the harness type has no such field",
			`dropped, every field set: refsup's JSON does not decode strictly into the harness type: json: unknown field "removed"`,
		}},
		{"invented", reflect.TypeFor[struct {
			Run     string   `json:"run"`
			Removed []string `json:"removed"`
			Inner   nested   `json:"inner"`
			Killed  []killed `json:"killed"`
			Note    string   `json:"note"`
		}](), []string{
			"invented.note: the harness reads it, refsup writes no such field",
			`invented, every field set: the harness's JSON does not decode strictly into refsup's type: json: unknown field "note"`,
		}},
		{"kind", reflect.TypeFor[struct {
			Run     string   `json:"run"`
			Removed []string `json:"removed"`
			Inner   struct {
				N string `json:"n"`
			} `json:"inner"`
			Killed []killed `json:"killed"`
		}](), []string{
			"kind.inner.n: JSON number on refsup's side, string on the harness's",
			"kind, every field set: refsup's JSON does not decode strictly into the harness type: json: cannot unmarshal number",
		}},
		{"renamed", reflect.TypeFor[struct {
			Run     string   `json:"run"`
			Removed []string `json:"removed"`
			Inner   nested   `json:"inner"`
			Killed  []struct {
				PID  int    `json:"pid"`
				Comm string `json:"command"`
			} `json:"killed"`
		}](), []string{
			"renamed.killed[].comm: refsup writes it, the harness type has no such field",
			"renamed.killed[].command: the harness reads it, refsup writes no such field",
			`renamed, every field set: refsup's JSON does not decode strictly into the harness type: json: unknown field "comm"`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems := contract(wirePair{c.name, reflect.TypeFor[refsupSide](), c.harness, []string{"raw"}})
			all := strings.Join(problems, "\n")
			if len(c.want) == 0 && len(problems) > 0 {
				t.Errorf("the check reports a pair that agrees:\n%s", all)
			}
			for _, want := range c.want {
				if !strings.Contains(all, want) {
					t.Errorf("the check did not report %q; it said:\n%s", want, all)
				}
			}
		})
	}
}

// contract lists every way the pair's JSON disagrees: fields, their names,
// omitempty and JSON kinds, nested too; then round trips both ways, each
// decode strict, with every field set, with every list empty and with the
// zero value.
func contract(p wirePair) []string {
	problems := compareFields(p.name, p.refsup, p.harness, p.harnessOnly, map[[2]reflect.Type]bool{})
	for _, mode := range []fillMode{fillAll, fillEmpty, fillZero} {
		r := reflect.New(p.refsup)
		fill(r.Elem(), mode, nil, new(int))
		problems = append(problems, roundTrip(p.name+", "+mode.String(), "refsup's", r.Interface(), "the harness", reflect.New(p.harness).Interface())...)
		h := reflect.New(p.harness)
		fill(h.Elem(), mode, p.harnessOnly, new(int))
		problems = append(problems, roundTrip(p.name+", "+mode.String(), "the harness's", h.Interface(), "refsup's", reflect.New(p.refsup).Interface())...)
	}
	return problems
}

// roundTrip marshals from, decodes it strictly into to, marshals that and
// compares the two JSON documents.
func roundTrip(what, fromSide string, from any, toSide string, to any) []string {
	b1, err := json.Marshal(from)
	if err != nil {
		return []string{fmt.Sprintf("%s: marshalling %s's value: %v", what, fromSide, err)}
	}
	if err := strictjson.Decode(b1, to, "value"); err != nil {
		return []string{fmt.Sprintf("%s: %s JSON does not decode strictly into %s type: %v\n\t%s", what, fromSide, toSide, err, b1)}
	}
	b2, err := json.Marshal(to)
	if err != nil {
		return []string{fmt.Sprintf("%s: marshalling %s's value: %v", what, toSide, err)}
	}
	if !sameDocument(b1, b2) {
		return []string{fmt.Sprintf("%s: %s JSON differs after a round trip through %s type:\n\t%s\n\t%s", what, fromSide, toSide, b1, b2)}
	}
	return nil
}

// sameDocument compares two JSON documents as values: the order of an
// object's fields is no part of the contract.
func sameDocument(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

type fillMode int

const (
	fillAll   fillMode = iota // every field non-zero, every list two long
	fillEmpty                 // every list and map empty, not nil; the rest zero
	fillZero                  // the zero value
)

func (m fillMode) String() string {
	return [...]string{"every field set", "empty lists", "zero value"}[m]
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// fill sets v as mode says, leaving the top-level fields named skip (JSON
// names) zero; n numbers the values so that no two fields are alike.
func fill(v reflect.Value, mode fillMode, skip []string, n *int) {
	if mode == fillZero {
		return
	}
	*n++
	switch {
	case v.Type() == timeType:
		if mode == fillAll {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 3, 4, 5, *n*1000, time.UTC)))
		}
		return
	case v.Type() == rawType:
		if mode == fillAll {
			v.SetBytes([]byte(fmt.Sprintf(`{"n":%d}`, *n)))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range jsonFields(v.Type()) {
			if !slices.Contains(skip, f.name) {
				fill(v.FieldByIndex(f.index), mode, nil, n)
			}
		}
	case reflect.Pointer:
		if mode == fillAll {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), mode, nil, n)
		}
	case reflect.Slice:
		if mode == fillEmpty {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), mode, nil, n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		if mode == fillAll {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, mode, nil, n)
			fill(e, mode, nil, n)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		if mode == fillAll {
			v.SetString(fmt.Sprintf("s%d", *n))
		}
	case reflect.Bool:
		v.SetBool(mode == fillAll)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if mode == fillAll {
			v.SetInt(int64(*n))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if mode == fillAll {
			v.SetUint(uint64(*n))
		}
	case reflect.Float32, reflect.Float64:
		if mode == fillAll {
			v.SetFloat(float64(*n) + 0.5)
		}
	default:
		panic(fmt.Sprintf("contract: cannot fill a %s", v.Type()))
	}
}

// jsonField is one field as encoding/json sees it.
type jsonField struct {
	name      string
	omitempty bool
	asString  bool // the ",string" option
	index     []int
	typ       reflect.Type
}

// jsonFields lists t's fields by their JSON names, an untagged embedded
// struct's fields promoted into t as encoding/json does.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && !hasTag && sf.Type.Kind() == reflect.Struct {
			for _, f := range jsonFields(sf.Type) {
				f.index = append([]int{i}, f.index...)
				out = append(out, f)
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		o := strings.Split(opts, ",")
		out = append(out, jsonField{name: name, omitempty: slices.Contains(o, "omitempty"), asString: slices.Contains(o, "string"),
			index: []int{i}, typ: sf.Type})
	}
	return out
}

// jsonKind is what JSON a Go type is written as.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return "string (a time)"
	case t == rawType:
		return "any JSON"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// compareFields compares the two types' JSON fields by name, then each
// pair of nested object types (through lists and pointers) the same way.
func compareFields(at string, r, h reflect.Type, harnessOnly []string, seen map[[2]reflect.Type]bool) []string {
	for r.Kind() == reflect.Pointer || r.Kind() == reflect.Slice || r.Kind() == reflect.Array {
		if h.Kind() != r.Kind() || r == rawType || h == rawType {
			break
		}
		if r.Kind() != reflect.Pointer {
			at += "[]"
		}
		r, h = r.Elem(), h.Elem()
	}
	if r.Kind() != reflect.Struct || h.Kind() != reflect.Struct || r == timeType || h == timeType || seen[[2]reflect.Type{r, h}] {
		return nil
	}
	seen[[2]reflect.Type{r, h}] = true
	var problems []string
	rf, hf := map[string]jsonField{}, map[string]jsonField{}
	var names []string
	for _, f := range jsonFields(r) {
		rf[f.name] = f
		names = append(names, f.name)
	}
	for _, f := range jsonFields(h) {
		hf[f.name] = f
		if _, ok := rf[f.name]; !ok {
			names = append(names, f.name)
		}
	}
	for _, name := range names {
		a, inR := rf[name]
		b, inH := hf[name]
		where := at + "." + name
		switch {
		case !inH:
			problems = append(problems, where+": refsup writes it, the harness type has no such field")
		case !inR && !slices.Contains(harnessOnly, name):
			problems = append(problems, where+": the harness reads it, refsup writes no such field")
		case !inR:
		case a.omitempty != b.omitempty:
			side := "refsup"
			if b.omitempty {
				side = "harness"
			}
			problems = append(problems, where+": omitempty on the "+side+" side only")
		case a.asString != b.asString:
			problems = append(problems, where+`: the ",string" option on one side only`)
		case jsonKind(a.typ) != jsonKind(b.typ):
			problems = append(problems, fmt.Sprintf("%s: JSON %s on refsup's side, %s on the harness's", where, jsonKind(a.typ), jsonKind(b.typ)))
		default:
			problems = append(problems, compareFields(where, a.typ, b.typ, nil, seen)...)
		}
	}
	return problems
}

// TestDecodesIntoContractTypes: every value the driver decodes from refsup
// (json.Unmarshal, or the call helper that runs a client verb) is of one of
// refsup's api types, or the harness side of a pair TestWireContract holds
// to it. A struct declared on the spot would be a third copy of the
// contract that nothing checks.
func TestDecodesIntoContractTypes(t *testing.T) {
	allowed := map[string]bool{}
	for _, p := range wirePairs {
		allowed["model."+p.harness.Name()] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	decodes := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		// each function's declared variables, by name, with their types
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			vars := map[string]ast.Expr{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if vs, ok := n.(*ast.ValueSpec); ok && vs.Type != nil {
					for _, id := range vs.Names {
						vars[id.Name] = vs.Type
					}
				}
				return true
			})
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !(sel.Sel.Name == "call" || (sel.Sel.Name == "Unmarshal" && isIdent(sel.X, "json"))) {
					return true
				}
				target, ok := call.Args[1].(*ast.UnaryExpr)
				if !ok || target.Op != token.AND {
					return true // nil, or call's own pass-through of its argument
				}
				decodes++
				at := fset.Position(call.Pos())
				id, ok := target.X.(*ast.Ident)
				if !ok || vars[id.Name] == nil {
					t.Errorf("%s: decodes into %s, whose type this test cannot tell: declare it with var and a type", at, exprString(target.X))
					return true
				}
				typ := exprString(vars[id.Name])
				if !strings.HasPrefix(typ, "api.") && !allowed[typ] {
					t.Errorf("%s: decodes refsup's output into %s: use refsup's api type, or a harness type paired with it in wirePairs", at, typ)
				}
				return true
			})
		}
	}
	if decodes < 8 {
		t.Fatalf("found %d decodes of refsup's output; the driver has more", decodes)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, token.NewFileSet(), e)
	return b.String()
}

// F1 reads these notes of refsup's fired points as a kill that landed after
// CRIU finished; a change on one side alone would make F1 blind to it.
func TestNoCRIUNotesAgree(t *testing.T) {
	if api.NoteNoCRIUToHold != model.NoteNoCRIUToHold || api.NoteNoCRIUToKill != model.NoteNoCRIUToKill {
		t.Fatalf("refsup notes %q, %q; the harness reads %q, %q",
			api.NoteNoCRIUToHold, api.NoteNoCRIUToKill, model.NoteNoCRIUToHold, model.NoteNoCRIUToKill)
	}
}
