package windows_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"faultwin/criteria/matchers"
	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/windows/runner"
	"faultwin/windows/suite"
)

// Loaded before RunSpecs: specs are generated from the registered YAML, and
// a load error must stop the suite before any tree is built. registered
// are refsup's windows (windows/*.yaml); described are the suites of the
// supervisors described as data (every windows/<name>/ with learned
// outcomes), each its own container labelled with its name. One suite runs
// them all: `ginkgo run ./windows`, filtered by label (refsup, podman,
// containerd, smoke, an operation, a family).
var (
	registered []model.Window
	described  []*suite.Described
)

// Suite settings, from the environment so `ginkgo run ./windows` needs no
// flags: FAULTWIN_RESULTS (refsup's rows file), FAULTWIN_RESULTS_DIR and
// FAULTWIN_RESULTS_PREFIX (the described supervisors', suite.ResultsFile),
// FAULTWIN_REFSUP (binary; built when unset), FAULTWIN_STATE_ROOT,
// FAULTWIN_BUGS (comma-separated known-bug switches, for mutant runs only).
var (
	session   *runner.Session
	refsupBin string
)

// TestMain lets this test binary be a described daemon's reaper
// (reexec): a description may start its daemon under one.
func TestMain(m *testing.M) { hosttest.Main(m) }

func TestWindows(t *testing.T) {
	RegisterFailHandler(Fail)
	ws, err := runner.LoadWindows("refsup")
	if err != nil {
		t.Fatalf("loading window definitions: %v", err)
	}
	if len(ws) == 0 {
		t.Fatal("no window definitions in windows/refsup/*.yaml")
	}
	registered = ws
	// FAULTWIN_DESCRIBED_DIR points discovery elsewhere (a test's
	// throwaway supervisor); it is windows/ itself otherwise.
	if described, err = suite.Discover(suite.EnvOr("FAULTWIN_DESCRIBED_DIR", ".")); err != nil {
		t.Fatal(err)
	}
	RunSpecs(t, "faultwin windows")
}

var _ = SynchronizedBeforeSuite(func() []byte {
	return suite.RefsupBinary("windows")
}, func(bin []byte) { refsupBin = string(bin) })

// openRefsup opens refsup's session the first time one of its windows
// runs, so a run that selects none writes no rows file for refsup.
func openRefsup() {
	if session != nil {
		return
	}
	results := suite.EnvOr("FAULTWIN_RESULTS", filepath.Join("..", "out", "windows.jsonl"))
	var bugs []string
	if b := os.Getenv("FAULTWIN_BUGS"); b != "" {
		bugs = strings.Split(b, ",")
	}
	var err error
	session, err = runner.Open(runner.Config{
		Bin:       refsupBin,
		StateRoot: suite.EnvOr("FAULTWIN_STATE_ROOT", model.DefaultStateRoot),
		Bugs:      bugs,
		LogDir:    filepath.Join(filepath.Dir(results), "logs"),
		Progress:  GinkgoWriter,
	}, "..", results, nil)
	Expect(err).NotTo(HaveOccurred())
}

var _ = SynchronizedAfterSuite(func() {
	if session != nil {
		Expect(session.Close()).To(Succeed())
	}
	for _, s := range described {
		Expect(s.Close()).To(Succeed())
	}
}, gexec.CleanupBuildArtifacts)

// windowTimeout bounds one window: prepare (up to three sessions and a
// checkpoint), the operation, two sweeps and four snapshots.
const windowTimeout = 3 * time.Minute

var _ = Describe("registered windows", Serial, Ordered, ContinueOnFailure, Label(model.DefaultDriver), func() {
	for _, w := range registered {
		w := w
		It(w.ID, Label(w.SelectionLabels()...), SpecTimeout(windowTimeout), func(ctx SpecContext) {
			openRefsup()
			o, _, err := session.RunAndRecord(ctx, w)
			Expect(err).NotTo(HaveOccurred())
			if len(o.HostLeft) > 0 {
				AbortSuite(runner.StopMessage(w.ID, o, -1, session.StateRoot()))
			}
			AddReportEntry("verdict", o.Verdict.Status+" "+o.Verdict.Reason)
			Expect(o.Verdict).To(matchers.HaveStatus("PASS"))
		})
	}
})

// The described supervisors' suites (suite.Described): a verdict there is
// a finding about that supervisor, held against its recorded soaks.
var _ = Describe("described supervisors", Serial, func() {
	for _, s := range described {
		s.Specs()
	}
})
