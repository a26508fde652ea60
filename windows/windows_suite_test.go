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
	"faultwin/internal/model"
	"faultwin/windows/runner"
	"faultwin/windows/suite"
)

// Loaded before RunSpecs: specs are generated from the registered YAML, and
// a load error must stop the suite before any tree is built.
var registered []model.Window

// Suite settings, from the environment so `ginkgo run ./windows` needs no
// flags: FAULTWIN_RESULTS (rows file), FAULTWIN_REFSUP (binary; built when
// unset), FAULTWIN_STATE_ROOT, FAULTWIN_BUGS (comma-separated known-bug
// switches, for mutant runs only).
var session *runner.Session

func TestWindows(t *testing.T) {
	RegisterFailHandler(Fail)
	ws, err := runner.LoadWindows(".")
	if err != nil {
		t.Fatalf("loading window definitions: %v", err)
	}
	if len(ws) == 0 {
		t.Fatal("no window definitions in windows/*.yaml")
	}
	registered = ws
	RunSpecs(t, "faultwin windows")
}

var _ = SynchronizedBeforeSuite(func() []byte {
	return suite.RefsupBinary("windows")
}, func(bin []byte) {
	results := suite.EnvOr("FAULTWIN_RESULTS", filepath.Join("..", "out", "windows.jsonl"))
	var bugs []string
	if b := os.Getenv("FAULTWIN_BUGS"); b != "" {
		bugs = strings.Split(b, ",")
	}
	var err error
	session, err = runner.Open(runner.Config{
		Bin:       string(bin),
		StateRoot: suite.EnvOr("FAULTWIN_STATE_ROOT", model.DefaultStateRoot),
		Bugs:      bugs,
		LogDir:    filepath.Join(filepath.Dir(results), "logs"),
		Progress:  GinkgoWriter,
	}, "..", results, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(session.Close)
})

var _ = SynchronizedAfterSuite(func() {}, gexec.CleanupBuildArtifacts)

// windowTimeout bounds one window: prepare (up to three sessions and a
// checkpoint), the operation, two sweeps and four snapshots.
const windowTimeout = 3 * time.Minute

var _ = Describe("registered windows", Serial, Ordered, ContinueOnFailure, func() {
	for _, w := range registered {
		w := w
		It(w.ID, Label(w.SelectionLabels()...), SpecTimeout(windowTimeout), func(ctx SpecContext) {
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
