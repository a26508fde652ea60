package definitions

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// FuzzParseFile feeds the window loader any bytes: it must not panic or
// hang, and every error it returns names the file and a line, as an error
// a user must act on does. The seeds are the checked-in definitions.
func FuzzParseFile(f *testing.F) {
	paths, err := filepath.Glob("../refsup/*.yaml")
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
		// A load's errors are joined one per line, and each names the
		// file and a line as a user's editor wants it.
		for _, l := range strings.Split(err.Error(), "\n") {
			if !located.MatchString(l) {
				t.Errorf("error line without file and line: %q", l)
			}
		}
	})
}

var located = regexp.MustCompile(`^fuzz\.yaml:[1-9][0-9]*: `)
