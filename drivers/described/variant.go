package described

import (
	"bytes"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// A variant is a description of the same supervisor built otherwise (a
// newer release installed beside the distribution's): its file names the
// description it varies (variant_of) and gives only the top-level fields
// that differ, each replacing the base's whole field. Everything else,
// the operations, phases, roles, points and recovery, is the base's, so
// the base's windows run on it unchanged (faultwin run --variant NAME).

// variantOf is the base a description file names, "" for none.
func variantOf(data []byte) string {
	var v struct {
		VariantOf string `yaml:"variant_of"`
	}
	if yaml.Unmarshal(data, &v) != nil {
		return "" // Parse reports the syntax
	}
	return v.VariantOf
}

// mergeVariant is the base's YAML with the variant's top-level fields put
// in place of its own, variant_of kept.
func mergeVariant(base, variant []byte) ([]byte, error) {
	var b, v yaml.Node
	if err := yaml.Unmarshal(base, &b); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(variant, &v); err != nil {
		return nil, err
	}
	if len(b.Content) == 0 || len(v.Content) == 0 || b.Content[0].Kind != yaml.MappingNode || v.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("a description and its variant are mappings of fields")
	}
	bm, vm := b.Content[0], v.Content[0]
	for i := 0; i+1 < len(vm.Content); i += 2 {
		key, val := vm.Content[i], vm.Content[i+1]
		replaced := false
		for j := 0; j+1 < len(bm.Content); j += 2 {
			if bm.Content[j].Value == key.Value {
				bm.Content[j+1], replaced = val, true
			}
		}
		if !replaced {
			bm.Content = append(bm.Content, key, val)
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&b); err != nil {
		return nil, err
	}
	return out.Bytes(), enc.Close()
}

// source is one description file's bytes.
type source struct {
	file string
	data []byte
}

// parseAll parses descriptions, the variants after the descriptions they
// vary: among these files, or among bases (the descriptions already
// loaded). A variant's errors name its file and its base's.
func parseAll(srcs []source, bases []*Description) ([]*Description, []error) {
	var out []*Description
	var errs []error
	var variants []source
	for _, s := range srcs {
		if variantOf(s.data) != "" {
			variants = append(variants, s)
			continue
		}
		d, err := Parse(s.file, s.data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.source = s.data
		out = append(out, d)
	}
	for _, s := range variants {
		name := variantOf(s.data)
		var base *Description
		for _, d := range append(append([]*Description{}, bases...), out...) {
			if d.Name == name {
				base = d
			}
		}
		if base == nil {
			errs = append(errs, &Error{File: s.file, Line: 1, Field: "variant_of", Problem: fmt.Sprintf("%q: no description of that name is loaded (a variant names the supervisor it varies)", name)})
			continue
		}
		if variantOf(base.source) != "" {
			errs = append(errs, &Error{File: s.file, Line: 1, Field: "variant_of", Problem: fmt.Sprintf("%q is itself a variant: vary the description it varies", name)})
			continue
		}
		merged, err := mergeVariant(base.source, s.data)
		if err != nil {
			errs = append(errs, &Error{File: s.file, Line: 1, Field: "variant_of", Problem: err.Error()})
			continue
		}
		d, err := Parse(s.file+" (as a variant of "+base.File+")", merged)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.source = merged
		out = append(out, d)
	}
	return out, errs
}

// ParseOver parses one description; a variant is merged over the base it
// names among bases.
func ParseOver(file string, data []byte, bases []*Description) (*Description, error) {
	ds, errs := parseAll([]source{{file, data}}, bases)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ds[0], nil
}
