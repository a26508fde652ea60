package described

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds the description loader any bytes: no panic, no hang,
// and every error names the file and a line. The seeds are the checked-in
// descriptions.
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob("supervisors/*.yaml")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no checked-in descriptions to seed from: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("name: x\n"))
	f.Add([]byte("name: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("fuzz.yaml", data)
		if err == nil {
			return
		}
		for _, e := range flatten(err) {
			var de *Error
			if errors.As(e, &de) {
				if de.File != "fuzz.yaml" || de.Line < 1 {
					t.Errorf("error without file or line: %+v", de)
				}
				continue
			}
			if !strings.Contains(e.Error(), "fuzz.yaml") {
				t.Errorf("error does not name the file: %v", e)
			}
		}
	})
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
