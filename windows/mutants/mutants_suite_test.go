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
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"golang.org/x/sys/unix"

	"faultwin/criteria"
	"faultwin/criteria/matchers"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
	"faultwin/windows/runner"
	"faultwin/windows/suite"
)

var (
	registered map[string]model.Window
	refsupBin  string
	stateRoot  string
	outDir     string
	prov       *runner.Provenance
	// disabled names a switch to leave off while keeping its expectations:
	// the spec must then fail, which shows the expectation depends on the bug.
	disabled string
	// strays are processes a mutant spec froze; cleanup thaws them first.
	strays []*frozen
	// killWait is refsup's wait for a killed process while a spec's stray
	// is frozen: a frozen stray never goes, and refsup's teardown and sweep
	// report it the same after 1 s as after their default 5 s and 3 s
	// (three waits in the teardown, one per sweep: ~20 s a spec saved).
	killWait time.Duration
)

func TestMutants(t *testing.T) {
	RegisterFailHandler(Fail)
	ws, err := runner.LoadWindows(filepath.Join("..", "refsup"))
	if err != nil {
		t.Fatalf("loading window definitions: %v", err)
	}
	registered = map[string]model.Window{}
	for _, w := range ws {
		registered[w.ID] = w
	}
	RunSpecs(t, "faultwin mutants")
}

var _ = SynchronizedBeforeSuite(func() []byte {
	return suite.RefsupBinary("mutants")
}, func(bin []byte) {
	refsupBin = string(bin)
	stateRoot = suite.EnvOr("FAULTWIN_STATE_ROOT", model.DefaultStateRoot)
	outDir = suite.EnvOr("FAULTWIN_MUTANT_RESULTS", filepath.Join("..", "..", "out", "mutants"))
	disabled = os.Getenv("FAULTWIN_MUTANT_DISABLE")
	Expect(os.MkdirAll(stateRoot, 0o755)).To(Succeed())
	Expect(os.MkdirAll(outDir, 0o755)).To(Succeed())
	prov = runner.NewProvenance(filepath.Join("..", ".."), "out", "results")
})

var _ = SynchronizedAfterSuite(func() {}, gexec.CleanupBuildArtifacts)

// runWindow runs one registered window with the given bug switches and
// appends its row to <outDir>/<file>.jsonl.
func runWindow(ctx context.Context, id string, bugs []string, file string) *runner.Outcome {
	return runWindowHook(ctx, id, bugs, file, nil, nil, false)
}

// rawDebris is why a mutant of a sweep bug skips the user's recovery: a
// restarted refsup reconciles what its predecessor left, so only the
// death's own debris shows what the buggy sweep cannot do.
const rawDebris = "the mutant spec judges the sweep on what the death itself left: no user recovery runs before it"

func runWindowHook(ctx context.Context, id string, bugs []string, file string,
	hook, afterDeath func(context.Context, model.Scope) error, recovery bool) *runner.Outcome {
	w, ok := registered[id]
	Expect(ok).To(BeTrue(), "window %s is not registered", id)
	if disabled != "" {
		bugs = without(bugs, disabled)
	}
	s, err := runner.Open(runner.Config{
		Bin:           refsupBin,
		StateRoot:     stateRoot,
		Bugs:          bugs,
		KillWait:      killWait,
		LogDir:        filepath.Join("..", "..", "out", "mutant-logs"),
		Progress:      GinkgoWriter,
		BeforeTrigger: hook,
		SkipAftermath: map[bool]string{false: rawDebris, true: ""}[recovery],
		AfterDeath: func(ctx context.Context, sc model.Scope) error {
			if err := keepLedger(ctx, sc); err != nil || afterDeath == nil {
				return err
			}
			return afterDeath(ctx, sc)
		},
	}, "", filepath.Join(outDir, file+".jsonl"), prov)
	Expect(err).NotTo(HaveOccurred())
	defer s.Close()
	o, err := s.Run(ctx, w)
	Expect(err).NotTo(HaveOccurred())
	if o.Input.Scope.Run != "" {
		// A window refused at preflight made nothing: the cleanup of the
		// window that left the host unclean is what restores it.
		DeferCleanup(restoreHost, o)
	}
	_, err = s.Record(o)
	Expect(err).NotTo(HaveOccurred())
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

// keptLedgers holds each mutant run's ledger as it was at the death, before
// any (buggy) sweep.
var keptLedgers = map[string][]byte{}

func keepLedger(_ context.Context, sc model.Scope) error {
	b, err := os.ReadFile(sc.Ledger)
	if err == nil {
		keptLedgers[sc.Run] = b
	}
	return nil
}

// restoreHost puts the host back after a mutant, with the supervisor's own
// correct sweep wherever it can:
//   - processes the spec froze are thawed first, and the run's network
//     namespaces the spec held are let go;
//   - a ledger a buggy sweep dropped is put back as it was at the death, and
//     refsup's sweep (no bug) runs on it, again at each poll until the host
//     is clean (a restorer can take seconds to finish dying);
//   - a mount no ledger ever recorded (the unledgered-mount bug: O1's own
//     evidence) is unmounted by the spec, since no sweep can know it;
//   - a sysctl left flipped is set back to its preflight value.
func restoreHost(ctx context.Context, o *runner.Outcome) {
	for _, f := range strays {
		Expect(f.thaw()).To(Succeed())
	}
	strays = nil
	Expect(releaseHolds()).To(Succeed())
	sc := o.Input.Scope
	if sc.Run != "" {
		if b, ok := keptLedgers[sc.Run]; ok {
			if _, err := os.Stat(sc.Ledger); os.IsNotExist(err) {
				Expect(os.MkdirAll(sc.StateDir, 0o755)).To(Succeed())
				Expect(os.WriteFile(sc.Ledger, b, 0o600)).To(Succeed())
			}
		}
		for _, m := range unledgered(o) {
			GinkgoWriter.Printf("unmounting %s: recorded by no ledger\n", m)
			Expect(unix.Unmount(m, 0)).To(Succeed(), "unmounting unledgered %s", m)
		}
		for _, l := range unrecordedDisplays(o) {
			GinkgoWriter.Printf("removing %s: a display link into the run that no ledger records\n", l)
			Expect(os.Remove(l)).To(Succeed(), "removing unrecorded display link %s", l)
		}
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
		if sc.Run != "" {
			correctSweep(ctx, sc.Run)
		}
		s, err := host.Capture(ctx, "mutant_cleanup", roots, snapshots.Decoys{})
		Expect(err).NotTo(HaveOccurred())
		return criteria.Leftovers(s, roots)
	}).WithTimeout(30*time.Second).WithPolling(500*time.Millisecond).WithContext(ctx).Should(BeEmpty(),
		"host not clean after mutant cleanup")
}

// correctSweep runs refsup's sweep of run with no bug switch.
func correctSweep(ctx context.Context, run string) {
	cmd := exec.CommandContext(ctx, refsupBin, "sweep", "--root", stateRoot, "--run", run)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	Expect(cmd.Run()).To(Succeed(), "correct sweep of mutant run %s: %s", run, out.String())
	GinkgoWriter.Printf("correct sweep of %s:\n%s\n", run, out.String())
}

// unledgered returns the host mounts under the run's state dir that were
// there at the death but in no ledger, deepest first.
func unledgered(o *runner.Outcome) []string {
	ledgered := map[string]bool{}
	for _, m := range o.Input.LedgeredMounts {
		ledgered[m] = true
	}
	var out []string
	for _, m := range o.Input.AfterDeath.Mounts {
		if !m.Foreign && !m.Decoy && model.Within(m.MountPoint, o.Input.Scope.StateDir) && !ledgered[m.MountPoint] {
			if ok, _ := mountinfo.Mounted(m.MountPoint); ok {
				out = append(out, m.MountPoint)
			}
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

// unrecordedDisplays lists the host display links the last snapshot saw
// pointing into the run's state dir, once its ledger is gone (the
// settle-drops-display bug's leftover: the link's target is what proves
// the run made it).
func unrecordedDisplays(o *runner.Outcome) []string {
	sc := o.Input.Scope
	if _, err := os.Stat(sc.Ledger); err == nil {
		return nil // the sweep still has records to act on
	}
	var out []string
	for _, f := range o.Input.AfterSweep2.X11 {
		if t, err := os.Readlink(f.Path); err == nil && model.Within(t, sc.StateDir) {
			out = append(out, f.Path)
		}
	}
	return out
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

// mutant is one known-bug switch and the verdict it must produce.
type mutant struct {
	bug      string
	window   string   // registered window run with the bug on
	status   string   // expected status
	fail     []string // exactly the criteria that must be false
	evidence string   // a line of the first failing criterion contains this
	// stray: freeze one of the run's processes before the trigger, so the
	// sweep meets a process it cannot reap (the adversary of the run 2
	// cascade); it is thawed, and so dies of the sweep's SIGKILL, in cleanup.
	stray bool
	// next, when set, is run right after with no bug: the host the bug left
	// must make it INVALID with the stray as evidence, never PASS.
	next         string
	nextEvidence string
	// holdNetns: after the death, keep every network namespace the run
	// bound under its state dir alive with a process of the harness's (as
	// any tool that entered it would), so what the sweep leaves in one
	// outlives the sweep's unmount.
	holdNetns bool
	// forwardOff: start from ip_forward=0 (put back after), since the bug
	// shows only as a flip the supervisor failed to undo.
	forwardOff bool
	// recovery: run the user's recovery (U1..U3) before the sweep; off,
	// the sweep meets the death's own debris.
	recovery bool
}

var table = []mutant{
	// W4R kills CRIU's top process, then refsup, when CRIU reports the
	// restored tree's namespaces set up: its forked restorer tasks exist at
	// every kill, so the bug shows every time (a clock cannot promise that).
	// The restorers hold the session's mounts and cgroups, and the sweep
	// keeps the ledger, and the sessions' state with it (P7), while they
	// live.
	{bug: "criu-by-name", window: "W4R", status: model.StatusFail,
		fail:     []string{model.P1, model.P2, model.P3, model.P4, model.P6, model.P7},
		evidence: "criu", next: "W4_150", nextEvidence: "criu"},
	// The control: the correct sweep meets the same unkillable stray, reports
	// it as a survivor and keeps the ledger (P4), so nothing is unowned; the
	// stray keeps its session's cgroups too (P3), and the sweep the
	// session's state (P7).
	{bug: "", window: "W11", status: model.StatusFail, fail: []string{model.P1, model.P3, model.P4, model.P6, model.P7},
		evidence: "sleep", stray: true},
	{bug: "drop-ledger-survivor", window: "W11", status: model.StatusFail, fail: []string{model.P1, model.P3, model.P6, model.P7},
		evidence: "sleep", stray: true, next: "W12", nextEvidence: "sleep"},
	// With the namespace held, the control W8L passes: the correct sweep
	// deletes CRIU's lock table before it unmounts the namespace.
	{bug: "", window: "W8L", status: model.StatusPass, holdNetns: true},
	{bug: "leave-criu-table", window: "W8L", status: model.StatusFail, fail: []string{model.P3},
		evidence: "CRIU-", holdNetns: true},
	{bug: "leak-cgroup", window: "W11", status: model.StatusFail, fail: []string{model.P3},
		evidence: "cgroup"},
	{bug: "leave-ledger", window: "W11", status: model.StatusFail, fail: []string{model.P4, model.P6},
		evidence: "ledger"},
	{bug: "substring-paths", window: "W11", status: model.StatusFail, fail: []string{model.P5},
		evidence: "decoy"},
	// (the session's dir, with the mount in it, stays: P7)
	{bug: "unledgered-mount", window: "W11", status: model.StatusFail, fail: []string{model.O1, model.P2, model.P6, model.P7},
		evidence: "stage"},
	{bug: "leave-table", window: "W11", status: model.StatusFail, fail: []string{model.P3},
		evidence: "faultwin_"},
	{bug: "leave-ip-forward", window: "W11", status: model.StatusFail, fail: []string{model.H1},
		evidence: "ip_forward", forwardOff: true},
	{bug: "non-idempotent-sweep", window: "W11", status: model.StatusFail, fail: []string{model.P6},
		evidence: ""},
	{bug: "dead-point", window: "W2", status: model.StatusInvalid, fail: []string{model.F1},
		evidence: "restore.after_overlay"},
	// Recovery: each settle bug on the window whose death it mishandles.
	// The restart meets WH2's CRIU held alive mid-dump; a settle that does
	// not wait keeps the session CRIU then stops, and drops the intent.
	{bug: "settle-no-wait", window: "WH2_30", status: model.StatusFail, fail: []string{model.R2, model.R3},
		evidence: "does not run"},
	// WH5 dies again between the adopt and the wake: an intent cleared
	// before the wake leaves the third start nothing to settle.
	{bug: "clear-intent-no-resume", window: "WH5", status: model.StatusFail, fail: []string{model.R2, model.R3},
		evidence: "does not run"},
	{bug: "adopt-save-images", window: "WS4", status: model.StatusFail, fail: []string{model.R2},
		evidence: "save's images were adopted"},
	{bug: "cold-wake", window: "WH4", status: model.StatusFail, fail: []string{model.R2},
		evidence: "booted afresh"},
	// WH2's settle lasts as long as the held CRIU: long enough to see a
	// call to the other session held.
	{bug: "settle-holds-all", window: "WH2_30", status: model.StatusFail, fail: []string{model.R4},
		evidence: "other session"},
	// WH4D wakes its display session from adopted images: an adopt that
	// loses the session's display record leaves /tmp/.X11-unix/X91 to every
	// sweep, and the next run given link 1 cannot start a display. Only R1's
	// fresh run meets that; P3 sees the link itself.
	{bug: "settle-drops-display", window: "WH4D", status: model.StatusFail, fail: []string{model.R1, model.P3},
		evidence: "is taken"},
	// What a death costs the user. W2 dies with a restore's overlay
	// mounted and no CRIU yet: the restart under the bug deletes the
	// checkpoint's images, and the user's retry boots the payload afresh
	// while saying it restored it.
	{bug: "restore-cold-start", window: "W2", status: model.StatusFail, fail: []string{model.U1}, recovery: true,
		evidence: "booted afresh"},
	// A list that never answers: each look hangs until the bound, and with
	// no view nothing refsup says can be checked against the host.
	{bug: "list-hangs", window: "W11", status: model.StatusFail, fail: []string{model.U2, model.U3}, recovery: true,
		evidence: "hung: no answer after"},
	// The sessions the dead supervisor started run on; the restarted one
	// lists them dead.
	{bug: "status-says-dead", window: "W5", status: model.StatusFail, fail: []string{model.U3}, recovery: true,
		evidence: "reported dead (stopped), the host runs it"},
	// Without the restart's reconcile, W8's session stays "checkpointing"
	// after its dump killed it, and its dumped images are never finished:
	// the view contradicts the host, and the user's retry cannot get the
	// session back (refused while it is "checkpointing": a message, not
	// the state).
	{bug: "skip-reconcile", window: "W8", status: model.StatusFail, fail: []string{model.U3, model.U1}, recovery: true,
		evidence: "reported checkpointing (running), the host has no live process of it"},
	// W3C_20 kills the restore's CRIU alone; refsup lives on. A restore
	// that then waits for its dead CRIU never answers its user: U2 judges
	// the interrupted call itself, killed by the harness at its bound.
	{bug: "restore-hangs", window: "W3C_20", status: model.StatusFail, fail: []string{model.U2}, recovery: true,
		evidence: "hung: still running"},
	// A restore that deletes its checkpoint when CRIU fails says "restore
	// failed", and the user's retry finds no checkpoint: a loss, however
	// plainly the supervisor answered.
	{bug: "restore-drops-images", window: "W3C_20", status: model.StatusFail, fail: []string{model.U1}, recovery: true,
		evidence: "the supervisor said"},
	// W2 kills refsup after its restore took the checkpoint's lock. A
	// restarted refsup that never clears its dead predecessor's locks
	// refuses every restore of the checkpoint: the user is stuck until an
	// expert releases the lock by hand, and the row names that step.
	{bug: "stale-restore-lock", window: "W2", status: model.StatusFail, fail: []string{model.U1}, recovery: true,
		evidence: "only the expert step refsup-unlock brought it back"},
	// A restore that succeeds (the user's retry, after the death of its
	// CRIU) and never releases its lock, with a sweep that leaves the
	// locks: a state entry of the run after the sweeps.
	{bug: "leave-restore-lock", window: "W3C_20", status: model.StatusFail, fail: []string{model.P7}, recovery: true,
		evidence: "/locks/"},
	// A restore that drops the session's larger files from the copied
	// layer: the restored session runs on from its memory (same boot
	// nonce, its counter moving), and the user's file is gone from its
	// root. The retry said it succeeded; the files say otherwise.
	{bug: "restore-drops-files", window: "W3C_20", status: model.StatusFail, fail: []string{model.U1}, recovery: true,
		evidence: "faultwin/user-data missing"},
}

// cover picks, greedily in table order, the fewest specs whose failing
// criteria together are every criterion any spec fails: make test runs
// those (label "cover"), make nightly the whole table. A spec is picked
// only for a criterion no spec picked before it fails.
func cover(table []mutant) map[int]bool {
	left := map[string]bool{}
	for _, m := range table {
		for _, id := range m.fail {
			left[id] = true
		}
	}
	picked := map[int]bool{}
	for len(left) > 0 {
		best, gain := -1, 0
		for i, m := range table {
			n := 0
			for _, id := range m.fail {
				if left[id] {
					n++
				}
			}
			if n > gain {
				best, gain = i, n
			}
		}
		picked[best] = true
		for _, id := range table[best].fail {
			delete(left, id)
		}
	}
	return picked
}

var _ = Describe("known-bug supervisors", Serial, Label("mutant"), func() {
	covering := cover(table)
	for i, m := range table {
		m := m
		name, labels := m.bug, []string{m.bug}
		if m.bug == "" {
			name, labels = "no bug (control)", []string{"control"}
		}
		file := strings.Join(labels, "")
		if covering[i] {
			labels = append(labels, "cover")
		}
		var bugs []string
		if m.bug != "" {
			bugs = []string{m.bug}
		}
		It(name+" makes "+m.window+" "+m.status, Label(labels...), SpecTimeout(4*time.Minute), func(ctx SpecContext) {
			if m.forwardOff {
				const fwd = "/proc/sys/net/ipv4/ip_forward"
				orig, err := os.ReadFile(fwd)
				Expect(err).NotTo(HaveOccurred())
				Expect(os.WriteFile(fwd, []byte("0\n"), 0o644)).To(Succeed())
				DeferCleanup(os.WriteFile, fwd, orig, os.FileMode(0o644))
			}
			hook := func(ctx context.Context, sc model.Scope) error {
				if !m.stray {
					return nil
				}
				f, err := freezeOne(ctx, sc)
				if f != nil {
					strays = append(strays, f)
				}
				return err
			}
			if m.stray {
				killWait = time.Second
				DeferCleanup(func() { killWait = 0 })
			}
			var afterDeath func(context.Context, model.Scope) error
			if m.holdNetns {
				afterDeath = holdNetns
			}
			o := runWindowHook(ctx, m.window, bugs, file, hook, afterDeath, m.recovery)
			Expect(o.Verdict).To(matchers.HaveStatus(m.status))
			Expect(failing(o.Verdict)).To(ConsistOf(m.fail), "failing criteria:\n%s", criteria.Explain(o.Verdict))
			if len(m.fail) > 0 {
				first, _ := o.Verdict.Result(m.fail[0])
				Expect(strings.Join(first.Evidence, "\n") + first.Summary).To(ContainSubstring(m.evidence))
			}
			if m.next != "" {
				n := runWindow(ctx, m.next, nil, file)
				Expect(n.Verdict).To(matchers.HaveStatus(model.StatusInvalid))
				pre, _ := n.Verdict.Result(model.PRE)
				Expect(pre.Holds()).To(BeFalse(), "the next window's preflight must see the stray")
				Expect(strings.Join(pre.Evidence, "\n")).To(ContainSubstring(m.nextEvidence))
			}
		})
	}

	It("counts every criterion as failing under some mutant of the cover", Label("cover"), func() {
		covered := map[string]bool{}
		for i, m := range table {
			for _, id := range m.fail {
				if covering[i] {
					covered[id] = true
				}
			}
		}
		for _, c := range criteria.Registered() {
			if c.ID == model.PRE {
				continue // any leftover fails it: every mutant's next window
			}
			Expect(covered).To(HaveKey(c.ID), "no mutant makes %s fail: a check that cannot fail", c.ID)
		}
	})
})
