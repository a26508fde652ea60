package described

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// Both containerd descriptions parse, with a daemon, a retry for every
// operation, and the phases their windows are aimed at.
func TestContainerdDescriptionsParse(t *testing.T) {
	for _, c := range []struct {
		file string
		ops  []string
	}{
		{"supervisors/containerd.yaml", []string{"checkpoint", "delete", "exec", "kill", "restore", "start"}},
		{"supervisors/containerd-cri.yaml", []string{"run"}},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(c.file, b)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		var ops []string
		for op := range d.Operations {
			ops = append(ops, op)
		}
		slices.Sort(ops)
		if d.Daemon == nil || !slices.Equal(ops, c.ops) || len(d.Recovery.Retry) != len(c.ops) {
			t.Errorf("%s: daemon %v, operations %v, %d retries; want %v", c.file, d.Daemon, ops, len(d.Recovery.Retry), c.ops)
		}
	}
}

// The CRI description aims its cri#568 point at the namespace's bind, a
// mount the CRI plugin makes under the run's state dir.
func TestCRINetnsPhaseIsAMount(t *testing.T) {
	b, err := os.ReadFile("supervisors/containerd-cri.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("containerd-cri.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(d.Operations["run"].Phases, func(p Phase) bool { return p.Name == "netns" })
	if i < 0 || !strings.HasPrefix(d.Operations["run"].Phases[i].Mounted, "{state}/") {
		t.Fatalf("run's netns phase: %+v", d.Operations["run"].Phases)
	}
	p := slices.IndexFunc(d.Points, func(p Point) bool { return p.Name == "run.daemon_at_netns" })
	if p < 0 || d.Points[p].Phase != "netns" {
		t.Fatalf("no point at the netns phase: %+v", d.Points)
	}
}
