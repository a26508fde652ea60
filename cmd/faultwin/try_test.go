package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/drivers/catalog"
	"faultwin/internal/hosttest"
)

// tryVerb runs faultwin try in this process and then hostcheck: the host
// must be clean after try whatever happened.
func tryVerb(t *testing.T, args ...string) (string, error) {
	t.Helper()
	t.Cleanup(func() { catalog.Use(nil) })
	var out bytes.Buffer
	err := run(context.Background(), &out, append([]string{"try"}, args...))
	var hc bytes.Buffer
	if herr := run(context.Background(), &hc, []string{"hostcheck"}); herr != nil {
		t.Errorf("host not clean after try %s: %v\n%s\ntry said:\n%s", strings.Join(args, " "), herr, hc.String(), out.String())
	}
	return out.String(), err
}

// Each shipped description's commands run with no fault: every step,
// every phase, nothing left.
func TestTryShippedDescriptions(t *testing.T) {
	hosttest.Need(t, "runs the real supervisors")
	for _, name := range catalog.Names() {
		if catalog.Description(name) == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// The description must be right: every command found and run,
			// every phase's evidence seen, the recovery's list read, and the
			// last resort leaving the host clean. What the supervisor itself
			// does with no fault is shown, not failed here: a step it
			// refuses or a leftover its sweep leaves is its own (a stop then
			// start refused, a restore leaving its runtime's checkpoint
			// directory, as the supervisors' soaks' controls show).
			t.Cleanup(func() { catalog.Use(nil) })
			var out bytes.Buffer
			tr, err := tryTrial(context.Background(), &out, []string{name})
			fail := func(format string, a ...any) {
				t.Helper()
				t.Fatalf("try %s: %s: %v\n%s", name, fmt.Sprintf(format, a...), err, out.String())
			}
			switch {
			case tr == nil:
				fail("nothing was tried")
			case len(tr.preLeft) > 0:
				fail("host not clean before: %q", tr.preLeft)
			case len(tr.runs) == 0:
				fail("no run was made")
			}
			if unseen := tr.unseen(); len(unseen) > 0 {
				fail("phases never seen: %s", strings.Join(unseen, ", "))
			}
			for _, r := range tr.runs {
				for _, s := range r.steps {
					if strings.Contains(s.Err, exec.ErrNotFound.Error()) {
						fail("%s %s: %s", s.Run, s.What, s.Err)
					}
					if s.ListErr != "" {
						fail("%s %s: list not read: %s", s.Run, s.What, s.ListErr)
					}
				}
			}
			switch {
			case tr.readErr != nil:
				fail("host not read: %v", tr.readErr)
			case !tr.clean:
				fail("host NOT clean after the last resort")
			}
			var hc bytes.Buffer
			if herr := run(context.Background(), &hc, []string{"hostcheck"}); herr != nil {
				fail("hostcheck after: %v\n%s", herr, hc.String())
			}
			if err != nil {
				t.Logf("try %s, the supervisor's own with no fault: %v", name, err)
			}
		})
	}
}

// A description broken where a newcomer breaks one: the step that fails
// names the field, and so does a phase whose role never appears.
func TestTryPointsAtTheBrokenField(t *testing.T) {
	hosttest.Need(t, "runs the real supervisor")
	src, err := os.ReadFile("../../drivers/described/supervisors/podman.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plant := func(name string, from, to string) string {
		t.Helper()
		if !bytes.Contains(src, []byte(from)) {
			t.Fatalf("podman.yaml no longer has %q", from)
		}
		s := strings.Replace(string(src), "name: podman\n", "name: "+name+"\n", 1)
		s = strings.Replace(s, from, to, 1)
		f := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct{ name, from, to, want string }{
		{"podman-wrong-binary", `cold: ["{base}", run,`, `cold: [/usr/bin/no-such-podman, run,`,
			"precondition.cold: exit -1 after"},
		{"podman-lost-role", `runc_kill: {comm: [runc], argv: [kill]}`, `runc_kill: {comm: [runc], argv: [kill, --no-such-flag]}`,
			"phase runc_kill never seen (appeared runc_kill): look at operations.rm.phases[1].appeared and roles.runc_kill"},
		{"podman-gone-never-seen", `{name: runc_delete, appeared: runc_delete,`, `{name: runc_delete, gone: criu,`,
			"phase runc_delete never seen (gone criu): look at operations.rm.phases[4].gone and roles.criu"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := tryVerb(t, "--operation", "rm", plant(c.name, c.from, c.to))
			if err == nil {
				t.Fatalf("try passed a broken description:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("no %q in:\n%s", c.want, out)
			}
			// The command no longer uses {base}: base is not to look at, the
			// vars it still uses are.
			if c.name == "podman-wrong-binary" && (!strings.Contains(out, "look at precondition.cold") || strings.Contains(out, "look at precondition.cold, base")) {
				t.Errorf("the failure does not point at precondition.cold without base:\n%s", out)
			}
		})
	}
}
