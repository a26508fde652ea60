package registration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/drivers/refsup"
	"faultwin/internal/model"
	"faultwin/windows/definitions"
)

func family(id, desc string) string {
	return "id: " + id + `
operation: restore
point: restore.after_overlay
precondition: {cold: 1, checkpoint: true}
criteria: [F1, P1]
description: ` + desc + "\n"
}

type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not installed: make deps installs it")
	}
	r := &repo{t, t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.git("config", "user.name", "test")
	r.git("config", "user.email", "test@example.invalid")
	r.git("config", "commit.gpgsign", "false")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", r.dir}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(name, text string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// window loads the work tree's definitions and returns instance id.
func (r *repo) window(id string) model.Window { return r.windowIn("windows", id) }

// windowIn loads the definitions of dir (from the top) and returns instance id.
func (r *repo) windowIn(dir, id string) model.Window {
	r.t.Helper()
	ws, err := definitions.Load(filepath.Join(r.dir, dir), testSpecs)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, w := range ws {
		if w.ID == id {
			return w
		}
	}
	r.t.Fatalf("no window %s", id)
	return model.Window{}
}

func (r *repo) check(id, wantCommit string, wantRegistered bool) {
	r.t.Helper()
	c, ok, err := Registration(r.dir, r.window(id), testSpecs)
	if err != nil {
		r.t.Fatal(err)
	}
	if c != wantCommit || ok != wantRegistered {
		r.t.Errorf("%s: got (%.8s, %v), want (%.8s, %v)", id, c, ok, wantCommit, wantRegistered)
	}
}

func TestRegistration(t *testing.T) {
	r := newRepo(t)
	// W10 first, so a substring match for W1 would wrongly land here.
	r.write("windows/a.yaml", family("W10", "ten"))
	r.write("README", "x")
	c1 := r.commit("W10")
	r.write("windows/a.yaml", family("W10", "ten")+"---\n"+family("W1", "one"))
	c2 := r.commit("W1")
	r.write("windows/b.yaml", family("W2", "two"))
	c3 := r.commit("W2")

	r.check("W10", c1, true)
	r.check("W1", c2, true)
	r.check("W2", c3, true)

	// A comment and reformatting keep the registration.
	r.write("windows/a.yaml", "# tens and ones\n"+family("W10", "ten")+"---\n"+family("W1", "   one  "))
	r.commit("comments")
	r.check("W1", c2, true)

	// A change of meaning, committed or not, makes the window unregistered.
	r.write("windows/b.yaml", family("W2", "two, changed after registration"))
	r.check("W2", c3, false)
	r.commit("change W2")
	r.check("W2", c3, false)

	// Changing it back registers it again: the definition is what counts.
	r.write("windows/b.yaml", family("W2", "two"))
	r.commit("revert W2")
	r.check("W2", c3, true)

	// Moving a family to another file keeps its registration.
	r.write("windows/a.yaml", family("W10", "ten"))
	r.write("windows/c.yaml", family("W1", "one"))
	r.commit("move W1")
	r.check("W1", c2, true)

	// A family only in the work tree is not registered.
	r.write("windows/d.yaml", family("W3", "three"))
	r.check("W3", "", false)

	// A subdirectory of the work tree finds the same registry.
	c, ok, err := Registration(filepath.Join(r.dir, "windows"), r.window("W2"), testSpecs)
	if err != nil || c != c3 || !ok {
		t.Errorf("from a subdirectory: %.8s %v %v", c, ok, err)
	}
}

func TestInvalidDraftIsNotARegistration(t *testing.T) {
	r := newRepo(t)
	r.write("windows/a.yaml", strings.Replace(family("W1", "one"), "restore.after_overlay", "restore.nowhere", 1))
	r.commit("draft")
	r.write("windows/a.yaml", family("W1", "one"))
	c2 := r.commit("fixed")
	r.check("W1", c2, true)
}

func TestNoCommitsYet(t *testing.T) {
	r := newRepo(t)
	r.write("windows/a.yaml", family("W1", "one"))
	r.check("W1", "", false)
}

func TestNotARepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not installed: make deps installs it")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, _, err := Registration(dir, model.Window{ID: "W1", Family: "W1", Hash: "x"}, testSpecs)
	if err == nil || !strings.Contains(err.Error(), "is not inside a git work tree") {
		t.Fatalf("got %v", err)
	}
}

func TestUnloadedWindow(t *testing.T) {
	r := newRepo(t)
	reg, err := Open(r.dir, testSpecs)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Lookup(model.Window{ID: "W1"}); err == nil {
		t.Fatal("a window with no hash was looked up")
	}
}

var testSpecs = []model.DriverSpec{refsup.Spec()}

// TestRegistrationFollowsAMove: definitions moved to a folder of their own
// keep the commit that registered them, whether the move kept the file as
// it was or edited a family on the way (that family is then unregistered,
// as any edit after registration makes it); a family first added after the
// move is registered where it was added.
func TestRegistrationFollowsAMove(t *testing.T) {
	r := newRepo(t)
	r.write("windows/a.yaml", family("W1", "one")+"---\n"+family("W2", "two"))
	r.write("windows/b.yaml", family("W3", "three"))
	first := r.commit("register W1, W2, W3")
	r.write("windows/other/c.yaml", family("W9", "not moved here"))
	r.commit("another folder")
	if err := os.MkdirAll(filepath.Join(r.dir, "windows/ref"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("mv", "windows/a.yaml", "windows/ref/a.yaml")
	r.git("mv", "windows/b.yaml", "windows/ref/b.yaml")
	r.write("windows/ref/a.yaml", family("W1", "one")+"---\n"+family("W2", "two, edited in the move"))
	moved := r.commit("move the definitions to windows/ref")
	r.write("windows/ref/d.yaml", family("W4", "four"))
	added := r.commit("add W4")
	for _, c := range []struct {
		id, commit string
		registered bool
	}{
		{"W1", first, true}, {"W2", first, false}, {"W3", first, true}, {"W4", added, true},
	} {
		w := r.windowIn("windows/ref", c.id)
		got, ok, err := Registration(r.dir, w, testSpecs)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.commit || ok != c.registered {
			t.Errorf("%s: got (%.8s, %v), want (%.8s, %v); the move was %.8s", c.id, got, ok, c.commit, c.registered, moved)
		}
	}
}
