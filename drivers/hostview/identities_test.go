package hostview

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Identities reads through two races with the host: a workload whose
// payload appears only after its first read, and one whose processes were
// exiting at the first read and are gone at the second.
func TestIdentitiesReadThroughStartAndExit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "counter")
	write := func(n int) {
		if err := os.WriteFile(file, []byte(fmt.Sprintf("%d m1 boot1\n", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1)
	reads := map[string]int{}
	counter := 1
	loc := func(name string) Locate {
		return func() (string, []int, error) {
			reads[name]++
			switch {
			case name == "late" && reads[name] == 1:
				return "", nil, fmt.Errorf("%w of late on the host", ErrNoProcess)
			case name == "exiting" && reads[name] > 1:
				return "", nil, fmt.Errorf("%w of exiting on the host", ErrNoProcess)
			}
			counter++
			write(counter)
			return file, []int{42}, nil
		}
	}
	ws := Identities([]string{"late", "exiting", "never"}, func(name string) Locate {
		if name == "never" {
			return func() (string, []int, error) { return "", nil, fmt.Errorf("%w of never on the host", ErrNoProcess) }
		}
		return loc(name)
	}, nil)
	late, exiting, never := ws[0], ws[1], ws[2]
	if !late.Running() || late.Err != "" {
		t.Errorf("a workload that started after its first read: %+v, want it read as running", late)
	}
	if exiting.Running() || len(exiting.PIDs) != 0 || !strings.Contains(exiting.Err, "the first read's pids [42] were exiting") {
		t.Errorf("a workload gone by the second read: %+v, want no pids and the first read's in Err", exiting)
	}
	if never.Running() || !strings.Contains(never.Err, "no live process of never") {
		t.Errorf("a workload never there: %+v", never)
	}
}
