package reexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	Register("test-echo", func(args []string) int {
		fmt.Print(strings.Join(args, " "), " ", os.Getenv(Env))
		return 7
	})
	Init()
	os.Exit(m.Run())
}

// The helper runs with its arguments, its exit code is the process's, and
// what it starts does not inherit the helper's name.
func TestHelperRunsWithItsArgsAndCode(t *testing.T) {
	cmd, err := Command("test-echo", os.Environ(), "a", "b c")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("helper exit: %v, want status 7", err)
	}
	if string(out) != "a b c test-echo" {
		t.Fatalf("helper said %q, want %q", out, "a b c test-echo")
	}
	if env := Without(cmd.Env); slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, Env+"=") }) {
		t.Fatalf("Without kept the helper's name: %q", env)
	}
}

// A binary whose main never called Init would run its own work again as
// the "helper": Command refuses instead.
func TestCommandRefusesWithoutInit(t *testing.T) {
	inited.Store(false)
	defer inited.Store(true)
	if _, err := Command("test-echo", nil); !errors.Is(err, ErrNoInit) {
		t.Fatalf("Command without Init: %v, want ErrNoInit", err)
	}
}

// A helper name this binary does not have is refused by Command, and by
// Init in a process started with it, naming the ones it has.
func TestUnknownHelper(t *testing.T) {
	if _, err := Command("no-such-helper", nil); err == nil {
		t.Fatal("Command of an unregistered helper: no error")
	}
	cmd, err := Command("test-echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(Without(cmd.Env), Env+"=no-such-helper")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "names no helper of this binary (it has test-echo)") {
		t.Fatalf("unknown helper: %v, %q", err, out)
	}
}
