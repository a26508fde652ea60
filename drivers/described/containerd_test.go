package described

import (
	"os"
	"testing"
)

func TestContainerdDescriptionParses(t *testing.T) {
	b, err := os.ReadFile("supervisors/containerd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("supervisors/containerd.yaml", b)
	if err != nil {
		t.Fatalf("containerd.yaml: %v", err)
	}
	if d.Daemon == nil || len(d.Operations) != 5 || len(d.Recovery.Retry) != 5 {
		t.Errorf("daemon %v, %d operations, %d retries", d.Daemon, len(d.Operations), len(d.Recovery.Retry))
	}
}
