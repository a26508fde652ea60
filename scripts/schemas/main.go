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

// schemas are the files written: name -> schema.
func schemas() map[string]*jsonschema.Schema {
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
	desc := yamlTags.Reflect(&described.Description{})
	desc.Title = "faultwin supervisor description"
	row := jsonTags.Reflect(&rows.Row{})
	row.Title = "faultwin row (one JSONL line of a rows file)"
	return map[string]*jsonschema.Schema{"window.schema.json": window, "description.schema.json": desc, "row.schema.json": row}
}

// Render is each schema's file content.
func Render() (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, s := range schemas() {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = append(b, '\n')
	}
	return out, nil
}

func main() {
	files, err := Render()
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
