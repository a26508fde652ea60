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
	"faultwin/drivers"
	refsupdriver "faultwin/drivers/refsup"
	"faultwin/reports"
	"faultwin/snapshots"
	"faultwin/windows"
	"faultwin/windows/def"
	"faultwin/windows/suite"
)

// Loaded before RunSpecs: specs are generated from the registered YAML, and
// a load error must stop the suite before any tree is built.
var registered []def.Window

// Suite settings, from the environment so `ginkgo run ./windows` needs no
// flags: FAULTWIN_RESULTS (rows file), FAULTWIN_REFSUP (binary; built when
// unset), FAULTWIN_STATE_ROOT, FAULTWIN_BUGS (comma-separated known-bug
// switches, for mutant runs only).
var (
	resultsPath string
	stateRoot   string
	refsupBin   string
	bugs        []string
	runner      *windows.Runner
	writer      *reports.Writer
	prov        *windows.Provenance
)

func TestWindows(t *testing.T) {
	RegisterFailHandler(Fail)
	ws, err := def.Load(".")
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
	refsupBin = string(bin)
	resultsPath = suite.EnvOr("FAULTWIN_RESULTS", filepath.Join("..", "out", "windows.jsonl"))
	stateRoot = suite.EnvOr("FAULTWIN_STATE_ROOT", suite.DefaultStateRoot)
	if b := os.Getenv("FAULTWIN_BUGS"); b != "" {
		bugs = strings.Split(b, ",")
	}
	Expect(os.MkdirAll(stateRoot, 0o755)).To(Succeed())
	Expect(os.MkdirAll(filepath.Dir(resultsPath), 0o755)).To(Succeed())
	logDir := filepath.Join(filepath.Dir(resultsPath), "logs")
	runner = &windows.Runner{
		NewDriver: func(dir string) drivers.Driver {
			return refsupdriver.New(refsupBin, stateRoot, dir, bugs)
		},
		Roots:    snapshots.DefaultRoots(stateRoot),
		LogDir:   logDir,
		Progress: GinkgoWriter,
	}
	prov = windows.NewProvenance("..", "out", "results")
	var err error
	writer, err = reports.Open(resultsPath)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(writer.Close)
})

var _ = SynchronizedAfterSuite(func() {}, gexec.CleanupBuildArtifacts)

// windowTimeout bounds one window: prepare (up to three sessions and a
// checkpoint), the operation, two sweeps and four snapshots.
const windowTimeout = 3 * time.Minute

var _ = Describe("registered windows", Serial, Ordered, func() {
	for _, w := range registered {
		w := w
		It(w.ID, Label(windows.Labels(w)...), SpecTimeout(windowTimeout), func(ctx SpecContext) {
			o, err := runner.Run(ctx, w)
			Expect(err).NotTo(HaveOccurred())
			row, err := prov.Row(o, "refsup")
			Expect(err).NotTo(HaveOccurred())
			Expect(writer.Append(row)).To(Succeed(), "writing the row to %s", resultsPath)
			AddReportEntry("verdict", o.Verdict.Status+" "+o.Verdict.Reason)
			Expect(o.Verdict).To(matchers.HaveStatus("PASS"))
		})
	}
})
