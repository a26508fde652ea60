package described

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// A variant is its base with the fields it gives replaced: the shipped
// containerd-latest keeps containerd's operations, points and recovery,
// and takes its own name, PATH and requirements.
func TestVariantOfContainerd(t *testing.T) {
	bases, err := LoadFS(os.DirFS("supervisors"), "supervisors/")
	if err != nil {
		t.Fatal(err)
	}
	var base *Description
	for _, d := range bases {
		if d.Name == "containerd" {
			base = d
		}
	}
	ds, err := LoadPaths("variants", bases...)
	if err != nil || len(ds) != 3 {
		t.Fatalf("LoadPaths(variants) = %d descriptions, %v; want the three shipped variants", len(ds), err)
	}
	v := ds[0]
	if v.Name != "containerd-latest" || v.VariantOf != "containerd" || !slices.Contains(v.PathPrepend, "/opt/faultwin/latest/bin") {
		t.Errorf("variant %s of %s, PATH %v", v.Name, v.VariantOf, v.PathPrepend)
	}
	if len(v.Operations) != len(base.Operations) || len(v.Points) != len(base.Points) || v.Recovery.BoundMS != base.Recovery.BoundMS {
		t.Errorf("the variant does not keep its base's operations (%d, base %d), points (%d, %d) and recovery", len(v.Operations), len(base.Operations), len(v.Points), len(base.Points))
	}
	if v.Requires[0].MinVersion != "2.4" {
		t.Errorf("requires not the variant's: %+v", v.Requires[0])
	}
	// Its windows' spec is the base's.
	if got, want := v.Spec().Operations, base.Spec().Operations; !slices.Equal(got, want) {
		t.Errorf("spec operations %v, base's %v", got, want)
	}
}

func TestVariantErrors(t *testing.T) {
	bases, _ := LoadFS(os.DirFS("supervisors"), "supervisors/")
	data, _ := os.ReadFile("variants/containerd-latest.yaml")
	for _, tc := range []struct{ name, edit, want string }{
		{"unknown base", strings.Replace(string(data), "variant_of: containerd", "variant_of: nosuch", 1), `variant_of: "nosuch": no description of that name is loaded`},
		{"a field of the merge is wrong", strings.Replace(string(data), "path_prepend:", "timeout_ms: -1\npath_prepend:", 1), "timeout_ms"},
	} {
		_, err := ParseOver("v.yaml", []byte(tc.edit), bases)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "v.yaml") {
			t.Errorf("%s: %v, want an error of v.yaml saying %q", tc.name, err, tc.want)
		}
	}
	// A variant of a variant is refused.
	v, err := ParseOver("v.yaml", data, bases)
	if err != nil {
		t.Fatal(err)
	}
	again := strings.Replace(strings.Replace(string(data), "variant_of: containerd", "variant_of: containerd-latest", 1), "name: containerd-latest", "name: containerd-later", 1)
	if _, err := ParseOver("w.yaml", []byte(again), append(bases, v)); err == nil || !strings.Contains(err.Error(), "is itself a variant") {
		t.Errorf("variant of a variant: %v", err)
	}
}
