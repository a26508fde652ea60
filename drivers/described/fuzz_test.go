package described

import (
	"os"
	"path/filepath"
	"regexp"
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
