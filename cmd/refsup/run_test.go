package main

import (
	"bytes"
	"context"
	"encoding/json"
	"faultwin/fixtures/refsup/bugs"
	"strings"
	"testing"
)

func TestRunPointsWithoutDaemon(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), &out, &errb, []string{"points"}); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Points []struct{ Name string }
		Bugs   map[string]string
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range v.Points {
		names[p.Name] = true
	}
	for _, want := range []string{"restore.before_overlay", "restore.after_overlay", "restore.during_criu",
		"restore.after_criu", "restore.after_register", "restore.mid_reseed", "checkpoint.after_dump",
		"checkpoint.after_root_unmount", "checkpoint.after_layer_bind", "destroy.after_kill",
		"destroy.after_root_unmount", "restore.failed_teardown", "sweep.after_kill", "sweep.after_unmount",
		"sweep.after_links", "idle.kill"} {
		if !names[want] {
			t.Errorf("point %s missing", want)
		}
	}
	if len(v.Bugs) != len(bugs.All) || len(v.Bugs) < 9 {
		t.Errorf("%d bug switches listed, want all %d", len(v.Bugs), len(bugs.All))
	}
}

func TestRunErrorsNameTheFix(t *testing.T) {
	cases := map[string][]string{
		"--root":       {"sweep"},
		"unknown verb": {"frobnicate"},
		"valid ones":   {"sweep", "--root", "/tmp/x", "--run", "r1", "--bug", "nope"},
		"run id":       {"owned", "--root", "/tmp/x", "--run", "../etc"},
		"refsup serve": {"list", "--root", "/nonexistent-root", "--run", "r1"},
	}
	for want, args := range cases {
		var out, errb bytes.Buffer
		err := run(context.Background(), &out, &errb, args)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run(%q) = %v, want an error mentioning %q", args, err, want)
		}
	}
}
