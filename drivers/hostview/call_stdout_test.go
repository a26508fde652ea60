package hostview

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A call that warns on stderr keeps both streams in its output, in
// order, and its stdout apart: a list's view is read from stdout, so a
// supervisor's warning is not taken for a line of the list.
func TestCallKeepsStdoutApart(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `echo 'time="x" level=warning msg="cgroup v1 is deprecated"' >&2; echo '[{"Names":["fw1"],"State":"running"}]'`)
	uc := Call(context.Background(), cmd, "r1", 5*time.Second)
	if !strings.Contains(uc.Output, "level=warning") || !strings.Contains(uc.Output, `"fw1"`) {
		t.Fatalf("output %q lacks a stream", uc.Output)
	}
	if uc.Stdout == nil || strings.Contains(*uc.Stdout, "warning") || !strings.HasPrefix(uc.ListOutput(), `[{"Names"`) {
		t.Fatalf("stdout %v, list output %q: want the JSON alone", uc.Stdout, uc.ListOutput())
	}
	quiet := Call(context.Background(), exec.Command("/bin/sh", "-c", "echo fw1 RUNNING"), "r1", 5*time.Second)
	if quiet.Stdout != nil || quiet.ListOutput() != "fw1 RUNNING\n" {
		t.Errorf("a call with nothing on stderr records stdout apart (%v) or reads %q", quiet.Stdout, quiet.ListOutput())
	}
}
