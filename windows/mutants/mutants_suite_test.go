// Package mutants proves every criterion can fail: each spec runs a
// registered window against refsup with one known-bug switch on and asserts
// the exact verdict the bug must produce. A criterion no mutant fails is a
// check that cannot fail.
package mutants_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"faultwin/criteria"
	"faultwin/criteria/matchers"
	"faultwin/drivers"
	refsupdriver "faultwin/drivers/refsup"
	"faultwin/reports"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
	"faultwin/windows"
	"faultwin/windows/def"
)

var (
	registered map[string]def.Window
	refsupBin  string
	stateRoot  string
	outDir     string
	prov       *windows.Provenance
	// disabled names a switch to leave off while keeping its expectations:
	// the spec must then fail, which shows the expectation depends on the bug.
	disabled string
)

func TestMutants(t *testing.T) {
	RegisterFailHandler(Fail)
	ws, err := def.Load("..")
	if err != nil {
		t.Fatalf("loading window definitions: %v", err)
	}
	registered = map[string]def.Window{}
	for _, w := range ws {
		registered[w.ID] = w
	}
	RunSpecs(t, "faultwin mutants")
}

var _ = SynchronizedBeforeSuite(func() []byte {
	Expect(os.Geteuid()).To(BeZero(), "mutants drive real namespaces, mounts, veth and CRIU: run as root")
	bin := os.Getenv("FAULTWIN_REFSUP")
	if bin == "" {
		var err error
		bin, err = gexec.Build("faultwin/cmd/refsup")
		Expect(err).NotTo(HaveOccurred(), "building refsup")
	}
	return []byte(bin)
}, func(bin []byte) {
	refsupBin = string(bin)
	stateRoot = envOr("FAULTWIN_STATE_ROOT", "/var/lib/faultwin/state")
	outDir = envOr("FAULTWIN_MUTANT_RESULTS", filepath.Join("..", "..", "out", "mutants"))
	disabled = os.Getenv("FAULTWIN_MUTANT_DISABLE")
	Expect(os.MkdirAll(stateRoot, 0o755)).To(Succeed())
	Expect(os.MkdirAll(outDir, 0o755)).To(Succeed())
	prov = windows.NewProvenance(filepath.Join("..", ".."), "out", "results")
})

var _ = SynchronizedAfterSuite(func() {}, gexec.CleanupBuildArtifacts)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// runWindow runs one registered window with the given bug switches and
// appends its row to <outDir>/<file>.jsonl.
func runWindow(ctx context.Context, id string, bugs []string, file string) *windows.Outcome {
	w, ok := registered[id]
	Expect(ok).To(BeTrue(), "window %s is not registered", id)
	if disabled != "" {
		bugs = without(bugs, disabled)
	}
	r := &windows.Runner{
		NewDriver: func(dir string) drivers.Driver { return refsupdriver.New(refsupBin, stateRoot, dir, bugs) },
		Roots:     snapshots.DefaultRoots(stateRoot),
		LogDir:    filepath.Join(outDir, "logs"),
		Progress:  GinkgoWriter,
	}
	o, err := r.Run(ctx, w)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(restoreHost, o)
	row, err := prov.Row(o, "refsup")
	Expect(err).NotTo(HaveOccurred())
	wr, err := reports.Open(filepath.Join(outDir, file+".jsonl"))
	Expect(err).NotTo(HaveOccurred())
	defer wr.Close()
	Expect(wr.Append(row)).To(Succeed())
	AddReportEntry(id, o.Verdict.Status+" "+o.Verdict.Reason)
	return o
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// restoreHost puts the host back after a mutant: the run is swept again by
// refsup without any bug (its own, correct sweep), and a sysctl the buggy
// sweep left flipped is set back to its preflight value, the one thing no
// ledger records any more. Then the host must be clean for the next spec.
func restoreHost(ctx context.Context, o *windows.Outcome) {
	if run := o.Input.Scope.Run; run != "" {
		cmd := exec.CommandContext(ctx, refsupBin, "sweep", "--root", stateRoot, "--run", run)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		Expect(cmd.Run()).To(Succeed(), "correct sweep of mutant run %s: %s", run, out.String())
	}
	for _, name := range o.Input.Roots.Sysctls {
		want, ok := o.Input.Preflight.Sysctls[snapshots.SysctlKey(name)]
		if !ok {
			continue
		}
		path := snapshots.SysctlPath(name)
		if got, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(got)) != want {
			Expect(os.WriteFile(path, []byte(want+"\n"), 0o644)).To(Succeed())
		}
	}
	roots := snapshots.DefaultRoots(stateRoot)
	Eventually(func() []string {
		s, err := host.Capture(ctx, "mutant_cleanup", roots, snapshots.Decoys{})
		Expect(err).NotTo(HaveOccurred())
		return criteria.Leftovers(s, roots)
	}).WithTimeout(10*time.Second).WithContext(ctx).Should(BeEmpty(), "host not clean after mutant cleanup")
}

// failing returns the ids of the criteria that were judged false.
func failing(v criteria.Verdict) []string {
	var out []string
	for _, r := range v.Results {
		if r.Judged && !r.Pass {
			out = append(out, r.ID)
		}
	}
	return out
}

var _ = matchers.HaveStatus
