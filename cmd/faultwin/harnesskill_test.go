package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"faultwin/internal/hosttest"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHarnessKilled SIGKILLs `faultwin run` at random instants (6 times in
// make test, FAULTWIN_HARNESS_KILLS=20 in make nightly),
// and checks every time what a crashed harness must leave: no partial row;
// a next run on the same host and results that refuses (host unclean, or
// the results file unsealed) instead of measuring leftovers; `faultwin
// sweep` making the host clean; and a file that replays once the
// unfinished session is sealed as such. It drives the real binaries
// (`make build`), as root.
func TestHarnessKilled(t *testing.T) {
	faultwin, refsup := builtBinaries(t)
	root := "/var/lib/faultwin/killtest"
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(root) })
	fw := func(args ...string) (string, int) {
		cmd := exec.Command(faultwin, args...)
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("faultwin %v: %v", args, err)
		}
		return string(out), code
	}
	results := filepath.Join(t.TempDir(), "killed.jsonl")
	outcomes := map[string]int{}
	kills := 6
	if n, err := strconv.Atoi(os.Getenv("FAULTWIN_HARNESS_KILLS")); err == nil && n > 0 {
		kills = n
	}
	for i := 1; i <= kills; i++ {
		delay := time.Duration(rand.IntN(1500)) * time.Millisecond
		cmd := exec.Command(faultwin, "run", "--state-root", root, "--refsup", refsup, "--results", results,
			"--logs", t.TempDir(), "--label-filter", "W1 || W11")
		cmd.Dir = "../.."
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		finished := err == nil || !strings.Contains(err.Error(), "killed")

		rowsN := wholeLines(t, results, i)
		hc, hcCode := fw("hostcheck", "--state-root", root)
		unclean := hcCode != 0
		rep, _ := fw("replay", results)
		unsealed := strings.Contains(rep, "UNSEALED")
		next, nextCode := fw("run", "--state-root", root, "--refsup", refsup, "--results", results, "--label-filter", "W1")
		if (unclean || unsealed) && nextCode == 0 {
			t.Fatalf("kill %d at %s: the next run measured after a crashed harness (host unclean=%v, file unsealed=%v):\n%s\nhostcheck:\n%s", i, delay, unclean, unsealed, next, hc)
		}
		swept, _ := fw("sweep", "--state-root", root, "--refsup", refsup)
		if hc2, code := fw("hostcheck", "--state-root", root); code != 0 {
			t.Fatalf("kill %d at %s: host not clean after faultwin sweep:\n%s\nsweep said:\n%s", i, delay, hc2, swept)
		}
		if strings.Contains(next, "unsealed") || strings.Contains(next, "UNSEALED") {
			if s, code := fw("seal", "--unfinished", "--reason", "harness SIGKILLed by TestHarnessKilled", results); code != 0 {
				t.Fatalf("kill %d: sealing the unfinished session: %s", i, s)
			}
		}
		if rep, code := fw("replay", results); code != 0 && rowsN > 0 {
			t.Fatalf("kill %d at %s: replay after sealing fails:\n%s", i, delay, rep)
		}
		switch {
		case finished:
			outcomes["run finished before the kill"]++
		case unclean:
			outcomes["killed mid-window: host unclean, next run refused, sweep cleaned"]++
		case unsealed:
			outcomes["killed between windows: next run refused the unsealed file"]++
		default:
			outcomes["killed before anything was made: next run ran"]++
		}
	}
	t.Logf("%d kills: %v", kills, outcomes)
}

// wholeLines checks that every line of path is a complete JSON object (no
// partial row) and returns how many there are.
func wholeLines(t *testing.T, path string, kill int) int {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("kill %d: %s ends in a partial line", kill, path)
	}
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("kill %d: line %d of %s is not one whole JSON value", kill, n+1, path)
		}
		n++
	}
	return n
}

// builtBinaries returns the faultwin and refsup binaries `make build` put in
// bin/, for the tests that drive the real supervisor as a user would. They
// need root, as CI has.
func builtBinaries(t *testing.T) (faultwin, refsup string) {
	t.Helper()
	hosttest.Need(t, "drives the real supervisor")
	bin, err := filepath.Abs("../../bin")
	if err != nil {
		t.Fatal(err)
	}
	faultwin, refsup = filepath.Join(bin, "faultwin"), filepath.Join(bin, "refsup")
	for _, b := range []string{faultwin, refsup} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%v: run `make build` first", err)
		}
	}
	return faultwin, refsup
}
