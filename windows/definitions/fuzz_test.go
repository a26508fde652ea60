package definitions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseFile feeds the window loader any bytes: it must not panic or
// hang, and every error it returns names the file and a line, as an error
// a user must act on does. The seeds are the checked-in definitions.
func FuzzParseFile(f *testing.F) {
	paths, err := filepath.Glob("../*.yaml")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no checked-in definitions to seed from: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\nid: W1\n---\n"))
	f.Add([]byte("id: [\n"))
	f.Add([]byte("id: W1\ndelays_ms: [1, -1]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParseFile("fuzz.yaml", data, testSpecs)
		if err == nil {
			return
		}
		for _, e := range unwrapAll(err) {
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

// unwrapAll flattens joined errors.
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unwrapAll(e)...)
		}
		return out
	}
	return []error{err}
}
