// Command schemas writes the JSON Schemas of faultwin's files, generated
// from the Go types the files are read into: window definitions
// (windows/definitions.Definition), supervisor descriptions
// (drivers/described.Description) and rows (reports/rows.Row), into
// docs/schemas/. The shipped window files and descriptions name theirs in
// a yaml-language-server comment, so an editor checks them as they are
// typed; faultwin lint says the rest. Run it as `go run ./scripts/schemas`
// after a change to one of those types; its test fails until then.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/invopop/jsonschema"

	"faultwin/drivers/described"
	"faultwin/reports/rows"
	"faultwin/windows/definitions"
)

// Dir is where the schemas are written, from the repository's root.
const Dir = "docs/schemas"

// schemas are the files written: name -> schema. root is the repository's
// root: a description's fields are described by their Go comments.
func schemas(root string) (map[string]*jsonschema.Schema, error) {
	lands := &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Description: "the phase every instance lands in"},
		{Type: "object", Description: "a phase per delay (ms): {30: prepare}",
			PatternProperties: map[string]*jsonschema.Schema{"^[0-9]+$": {Type: "string"}}, AdditionalProperties: jsonschema.FalseSchema},
	}}
	yamlTags := &jsonschema.Reflector{FieldNameTag: "yaml", RequiredFromJSONSchemaTags: true}
	jsonTags := &jsonschema.Reflector{
		RequiredFromJSONSchemaTags: true, AllowAdditionalProperties: true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeOf(definitions.LandsIn{}) {
				return lands
			}
			return nil
		},
	}
	window := (&jsonschema.Reflector{
		Mapper: jsonTags.Mapper,
	}).Reflect(&definitions.Definition{})
	window.Title = "faultwin window definition (one YAML document)"
	if err := commentsOf(yamlTags, root, "drivers/described"); err != nil {
		return nil, err
	}
	desc := yamlTags.Reflect(&described.Description{})
	desc.Title = "faultwin supervisor description"
	row := jsonTags.Reflect(&rows.Row{})
	row.Title = "faultwin row (one JSONL line of a rows file)"
	return map[string]*jsonschema.Schema{"window.schema.json": window, "description.schema.json": desc, "row.schema.json": row}, nil
}

// commentsOf adds the Go comments of the package in dir (from root) to r,
// as the reflected fields' descriptions. The extractor names a package by
// its path as walked, so it walks from the root.
func commentsOf(r *jsonschema.Reflector, root, dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	defer os.Chdir(wd) //nolint:errcheck // back where it was
	return r.AddGoComments("faultwin", dir)
}

// Render is each schema's file content, and the description format's
// reference generated from its schema; root is the repository's root.
func Render(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	ss, err := schemas(root)
	if err != nil {
		return nil, err
	}
	for name, s := range ss {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = append(b, '\n')
	}
	out[RefName] = reference(ss["description.schema.json"])
	return out, nil
}

func main() {
	files, err := Render(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemas:", err)
		os.Exit(1)
	}
	for name, b := range files {
		p := filepath.Join(Dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "schemas:", err)
			os.Exit(1)
		}
		fmt.Println("schemas: wrote", p)
	}
}
