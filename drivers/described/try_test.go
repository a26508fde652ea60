package described

import (
	"fmt"
	"os"
	"testing"
)

// A try makes each operation's run, the least demanding first, each
// followed by its retry's: podman's restore, which needs a checkpoint,
// comes last.
func TestTryRunsOrder(t *testing.T) {
	b, err := os.ReadFile("supervisors/podman.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("supervisors/podman.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(New(d, t.TempDir(), "").TryRuns())
	want := "[{checkpoint false cold 1} {checkpoint true cold 1} {rm false cold 1} {rm true cold 1} {stop false cold 1} {stop true cold 1} " +
		"{stop_slow false cold 1} {stop_slow true cold 1} {restore false cold 1, checkpoint} {restore true cold 1, checkpoint}]"
	if got != want {
		t.Errorf("podman's try runs\n got %s\nwant %s", got, want)
	}
}

// A failed step names each field to look at once, in the order the
// command uses them, however often the command names a variable.
func TestTryLookNamesEachFieldOnce(t *testing.T) {
	const tryLookFile = "supervisors/podman.yaml"

	b, err := os.ReadFile(tryLookFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(tryLookFile, b)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tryer{d: New(d, t.TempDir(), "")}
	cold := Command{"/bin/sh", "-c", "{base} image inspect {image} || {base} import x {image}; {base} run {image}"}
	got := fmt.Sprint(tr.look("precondition.cold", cold))
	if want := "[precondition.cold vars.image]"; got != want {
		t.Errorf("look at %s, want %s", got, want)
	}
}
