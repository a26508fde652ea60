package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"faultwin/reports/rows"
)

const repo = "../.."

// The shipped schemas are what the generator makes from today's types.
func TestSchemasAreGenerated(t *testing.T) {
	files, err := Render(repo)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(repo, Dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s/%s is not what the types generate (%v): run go run ./scripts/schemas", Dir, name, err)
		}
	}
}

func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(filepath.Join(repo, Dir, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// yamlDocs reads every YAML document of a file as JSON values, mapping
// keys made strings ({30: prepare} has integer keys).
func yamlDocs(t *testing.T, path string, data []byte) []any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v != nil {
			out = append(out, jsonValue(v))
		}
	}
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonValue(e)
		}
		return x
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonValue(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonValue(e)
		}
		return x
	case int:
		return float64(x)
	}
	return v
}

// asJSON round-trips v through encoding/json, as the validator reads it.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// Every shipped window file and description validates against its
// schema, and each file names its schema in the comment an editor reads.
func TestShippedFilesValidate(t *testing.T) {
	window, desc := compile(t, "window.schema.json"), compile(t, "description.schema.json")
	check := func(pattern string, s *jsonschema.Schema, schemaFile string) {
		paths, err := filepath.Glob(filepath.Join(repo, pattern))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: no files (%v)", pattern, err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte("# yaml-language-server: $schema=")) || !bytes.Contains(b, []byte(schemaFile)) {
				t.Errorf("%s does not name its schema (# yaml-language-server: $schema=.../%s)", p, schemaFile)
			}
			for i, d := range yamlDocs(t, p, b) {
				if err := s.Validate(asJSON(t, d)); err != nil {
					t.Errorf("%s, document %d: %v", p, i+1, err)
				}
			}
		}
	}
	check("windows/*/*.yaml", window, "window.schema.json")
	check("drivers/described/supervisors/*.yaml", desc, "description.schema.json")
	check("drivers/described/variants/*.yaml", desc, "description.schema.json")
	check("drivers/described/patched/*.yaml", desc, "description.schema.json")
}

// Planted errors do not validate: a window field the format does not
// have, a delay that is no number, a description's timeout given as text,
// a row whose status is a number.
func TestPlantedErrorsDoNotValidate(t *testing.T) {
	window, desc, row := compile(t, "window.schema.json"), compile(t, "description.schema.json"), compile(t, "row.schema.json")
	for name, c := range map[string]struct {
		s   *jsonschema.Schema
		doc string
	}{
		"unknown window field": {window, "id: W1\noperation: restore\npoint: p\nprecondition: {cold: 1}\ncriteria: [F1]\ndescription: d\ncolour: blue\n"},
		"delay as text":        {window, "id: W1\noperation: restore\npoint: p\ndelays_ms: [soon]\nprecondition: {cold: 1}\ncriteria: [F1]\ndescription: d\n"},
		"timeout as text":      {desc, "name: x\ntimeout_ms: 30s\n"},
		"unknown description":  {desc, "name: x\ncomand: [a]\n"},
	} {
		docs := yamlDocs(t, name, []byte(c.doc))
		if err := c.s.Validate(asJSON(t, docs[0])); err == nil {
			t.Errorf("%s: validates", name)
		}
	}
	bad := map[string]any{"schema": 1, "status": 3}
	if err := row.Validate(asJSON(t, bad)); err == nil {
		t.Error("a row with a numeric status validates")
	}
}

// Recorded rows validate against the row schema.
func TestRowsValidate(t *testing.T) {
	row := compile(t, "row.schema.json")
	for _, f := range []string{"results/windows.jsonl", "results/podman/soak-10-f3c092a.jsonl.gz", "results/mutants/restore-hangs.jsonl.gz"} {
		c, err := rows.VerifyContents(filepath.Join(repo, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		n := 0
		for _, r := range c.Rows {
			if r.Window.ID == "" || n >= 5 {
				continue
			}
			n++
			if err := row.Validate(asJSON(t, r)); err != nil {
				t.Errorf("%s row %s: %v", f, strings.TrimSpace(r.Window.ID), err)
			}
		}
	}
}

// The description reference documents every field (a field added to the
// Go type without a comment shows as undocumented), and the pages a
// newcomer reads link to it.
func TestReferenceDocumentsEveryField(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repo, Dir, RefName))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "(undocumented)") {
			t.Errorf("a field without a Go comment in drivers/described: %s", l)
		}
	}
	for _, want := range []string{"| `operations.<name>.phases[].gone` |", "| `recovery.retry.<name>.target` |", "| `recovery.list.skip` |", "| `requires[].name` |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the reference has no row %s", want)
		}
	}
	for _, page := range []string{"docs/describe-a-supervisor.md", "docs/described-supervisors.md"} {
		p, err := os.ReadFile(filepath.Join(repo, page))
		if err != nil || !strings.Contains(string(p), "schemas/"+RefName) {
			t.Errorf("%s does not link the reference (schemas/%s): %v", page, RefName, err)
		}
	}
}
