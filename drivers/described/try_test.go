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
// command uses them: Docker's cold names {docker} and {image} thrice.
func TestTryLookNamesEachFieldOnce(t *testing.T) {
	b, err := os.ReadFile("supervisors/docker.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("supervisors/docker.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tryer{d: New(d, t.TempDir(), "")}
	got := fmt.Sprint(tr.look("precondition.cold", d.Precondition.Cold))
	if want := "[precondition.cold vars.docker vars.image vars.opts vars.payload]"; got != want {
		t.Errorf("look at %s, want %s", got, want)
	}
}
