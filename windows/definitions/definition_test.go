package definitions

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The schema's type has the loader's fields, in the loader's order: a
// field added to one and not the other fails here.
func TestDefinitionFields(t *testing.T) {
	names := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
		return out
	}
	if got := names(Definition{}); !slices.Equal(got, topFields) {
		t.Errorf("Definition's fields %v, the loader's %v", got, topFields)
	}
	if got := names(PreFields{}); !slices.Equal(got, preFields) {
		t.Errorf("PreFields' fields %v, the loader's %v", got, preFields)
	}
}
