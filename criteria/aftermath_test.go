package criteria_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	"faultwin/internal/model"
)

// continued is an aftermath in which the user's retry of a restore
// brought fw1 back from its memory and the supervisor's view held.
func continued() *model.Aftermath {
	before := model.Workload{Name: "fw1", Marker: "m1", Boot: "b1", Counter: 20, Counter2: 23}
	host := []model.HostWorkload{{Name: "fw1", PIDs: []int{100, 101}, Comms: []string{"sh", "sleep"}}}
	none := []model.HostWorkload{{Name: "fw1", PIDs: []int{}}}
	return &model.Aftermath{
		Supervisor: "podman", Operation: "restore", Target: "fw1", Origin: "fw1", Expect: model.ExpectContinue, BoundMS: 1000,
		Before: []model.Workload{before},
		Calls: []model.UserCall{
			{Step: "look", What: "list (after_death)", MS: 90, Output: "[]"},
			{Step: "cleanup", What: "cleanup 1", MS: 80},
			{Step: "retry", What: "retry restore 1", MS: 400},
			{Step: "look", What: "list (after_retry)", MS: 90},
		},
		Looks: []model.Look{
			{When: "after_death", Call: 0, Reported: []model.Reported{{Name: "fw1", State: model.StateStopped, Raw: "exited"}}, HostPre: none, HostPost: none},
			{When: "after_retry", Call: 3, Reported: []model.Reported{{Name: "fw1", State: model.StateRunning, Raw: "running"}}, HostPre: host, HostPost: host},
		},
		After: []model.Workload{{Name: "fw1", PIDs: []int{100}, Marker: "m1", Boot: "b1", Counter: 31, Counter2: 34}},
	}
}

func judged(a *model.Aftermath, id string) criteria.Result {
	w := model.Window{ID: "X", Operation: a.Operation, Criteria: []string{model.U1, model.U2, model.U3}}
	r, _ := criteria.Evaluate(criteria.Input{Window: w, Aftermath: a}).Result(id)
	return r
}

func evidence(r criteria.Result) string { return r.Summary + "\n" + strings.Join(r.Evidence, "\n") }

func TestAftermathHolds(t *testing.T) {
	g := NewWithT(t)
	for _, id := range []string{model.U1, model.U2, model.U3} {
		r := judged(continued(), id)
		g.Expect(r.Holds()).To(BeTrue(), "%s: %s", id, evidence(r))
	}
}

func TestU1(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(a *model.Aftermath)
		holds  bool
		saying string
	}{
		{"booted afresh, the retry said it restored", func(a *model.Aftermath) { a.After[0].Boot, a.After[0].Counter, a.After[0].Counter2 = "b2", 1, 4 }, false, "booted afresh"},
		{"counter went back", func(a *model.Aftermath) { a.After[0].Counter, a.After[0].Counter2 = 3, 6 }, false, "went back"},
		{"another workload", func(a *model.Aftermath) { a.After[0].Marker = "m9" }, false, "another workload"},
		{"does not run, nobody says so", func(a *model.Aftermath) { a.After[0].Counter2 = a.After[0].Counter }, false, "unreported"},
		{"does not run, the retry says why", func(a *model.Aftermath) {
			a.After[0] = model.Workload{Name: "fw1", Err: "no live process of fw1 on the host"}
			a.Calls[2].Exit, a.Calls[2].Output = 125, "Error: checkpoint images of fw1 are gone\n"
		}, true, "reported by the supervisor"},
		{"a failed retry without a word is no report", func(a *model.Aftermath) {
			a.After[0] = model.Workload{Name: "fw1", Err: "no live process"}
			a.Calls[2].Exit = 1
		}, false, "unreported"},
		{"no workload out of the retry", func(a *model.Aftermath) { a.Target = "" }, false, "no workload came out"},
		{"removed and gone", func(a *model.Aftermath) {
			a.Expect, a.After[0] = model.ExpectAbsent, model.Workload{Name: "fw1", Err: "no live process"}
		}, true, "go on (absent)"},
		{"removal said done, still runs", func(a *model.Aftermath) { a.Expect = model.ExpectAbsent }, false, "still runs after its removal"},
		{"started again, fresh", func(a *model.Aftermath) { a.Expect, a.After[0].Boot = model.ExpectRuns, "b7" }, true, "(runs)"},
		{"not applicable", func(a *model.Aftermath) { a.NotApplicable = map[string]string{model.U1: "R2 judges it"}; a.Target = "" }, true, "does not apply: R2 judges it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := continued()
			tc.edit(a)
			r := judged(a, model.U1)
			if !r.Judged || r.Pass != tc.holds || !strings.Contains(evidence(r), tc.saying) {
				t.Errorf("judged %v pass %v, want pass %v saying %q:\n%s", r.Judged, r.Pass, tc.holds, tc.saying, evidence(r))
			}
		})
	}
}

func TestU1NotJudgedWithoutEvidence(t *testing.T) {
	g := NewWithT(t)
	a := continued()
	a.Before = nil
	g.Expect(judged(a, model.U1).Judged).To(BeFalse())
	w := model.Window{ID: "X", Operation: "restore", Criteria: []string{model.U1}}
	r, _ := criteria.Evaluate(criteria.Input{Window: w}).Result(model.U1)
	g.Expect(r.Judged).To(BeFalse())
	g.Expect(r.Summary).To(ContainSubstring("no aftermath recorded"))
}

func TestU2(t *testing.T) {
	g := NewWithT(t)
	a := continued()
	a.Calls[0].TimedOut, a.Calls[0].MS = true, 1000
	a.Calls[0].Stuck = []model.StuckProc{{PID: 7, Comm: "podman", State: "S", Wchan: "futex_wait_queue", Own: true},
		{PID: 9, Comm: "conmon", State: "S", Wchan: "do_wait"}}
	r := judged(a, model.U2)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(evidence(r)).To(ContainSubstring("list (after_death) hung: no answer after 1000 ms (bound 1000 ms); waiting: 7 podman (S in futex_wait_queue), 9 conmon (S in do_wait, not the call's)"))

	a = continued()
	a.Calls[3].Exit, a.Calls[3].Output = 125, "Error: database is locked\n"
	r = judged(a, model.U2)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(evidence(r)).To(ContainSubstring("list (after_retry) did not answer: exit 125 : Error: database is locked"))

	// a retry that fails promptly is an answer
	a = continued()
	a.Calls[2].Exit = 125
	g.Expect(judged(a, model.U2).Holds()).To(BeTrue())
	// a retry past the aftermath's bound hangs, unless the call carries a
	// bound of its own (a restore the supervisor lets wait for its
	// workload) and returned within it
	a = continued()
	a.Calls[2].MS = 3000
	r = judged(a, model.U2)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(evidence(r)).To(ContainSubstring("retry restore 1 hung: no answer after 3000 ms (bound 1000 ms)"))
	a.Calls[2].BoundMS = 20000
	g.Expect(judged(a, model.U2).Holds()).To(BeTrue())
	a.Calls[2].MS = 21000
	r = judged(a, model.U2)
	g.Expect(evidence(r)).To(ContainSubstring("retry restore 1 hung: no answer after 21000 ms (bound 20000 ms)"))
}

func TestU3(t *testing.T) {
	g := NewWithT(t)
	// reported exited while the host runs it
	a := continued()
	a.Looks[1].Reported[0] = model.Reported{Name: "fw1", State: model.StateStopped, Raw: "exited"}
	r := judged(a, model.U3)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(evidence(r)).To(ContainSubstring("after_retry: fw1 reported exited (stopped), the host runs it: pids [100 101] sh,sleep"))

	// reported running while the host has nothing of it
	a = continued()
	a.Looks[0].Reported[0] = model.Reported{Name: "fw1", State: model.StateRunning, Raw: "stopping"}
	r = judged(a, model.U3)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(evidence(r)).To(ContainSubstring("after_death: fw1 reported stopping (running), the host has no live process of it"))

	// reported running while every process of it is frozen; reported
	// paused, it agrees; reported stopped, it does not
	frozen := func(a *model.Aftermath) {
		for _, hs := range [][]model.HostWorkload{a.Looks[1].HostPre, a.Looks[1].HostPost} {
			for i := range hs {
				hs[i].Frozen = true
			}
		}
	}
	a = continued()
	frozen(a)
	r = judged(a, model.U3)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(evidence(r)).To(ContainSubstring("after_retry: fw1 reported running (running), every live process of it is frozen: pids [100 101]"))
	a = continued()
	frozen(a)
	a.Looks[1].Reported[0] = model.Reported{Name: "fw1", State: model.StatePaused, Raw: "PAUSED"}
	g.Expect(judged(a, model.U3).Holds()).To(BeTrue())
	a.Looks[1].Reported[0] = model.Reported{Name: "fw1", State: model.StateStopped, Raw: "STOPPED"}
	g.Expect(evidence(judged(a, model.U3))).To(ContainSubstring("fw1 reported STOPPED (stopped), the host holds it frozen"))
	a = continued()
	a.Looks[0].Reported[0] = model.Reported{Name: "fw1", State: model.StatePaused, Raw: "PAUSED"}
	g.Expect(evidence(judged(a, model.U3))).To(ContainSubstring("after_death: fw1 reported PAUSED (paused), the host has no live process of it"))

	// not listed while it runs: reported absent
	a = continued()
	a.Looks[1].Reported = nil
	g.Expect(evidence(judged(a, model.U3))).To(ContainSubstring("fw1 reported not listed (absent), the host runs it"))

	// a look during which the host changed proves nothing
	a = continued()
	a.Looks[1].HostPre = []model.HostWorkload{{Name: "fw1", PIDs: []int{}}}
	a.Looks[1].Reported[0].State = model.StateStopped
	r = judged(a, model.U3)
	g.Expect(r.Holds()).To(BeTrue(), evidence(r))
	g.Expect(evidence(r)).To(ContainSubstring("changed on the host during the look"))

	// no look answered: nothing could be checked
	a = continued()
	a.Calls[0].Exit, a.Calls[3].TimedOut = 1, true
	r = judged(a, model.U3)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(evidence(r)).To(ContainSubstring("no look answered"))

	// a word the description maps to no state is noted, not compared
	a = continued()
	a.Looks[1].Reported[0] = model.Reported{Name: "fw1", Raw: "limbo"}
	g.Expect(evidence(judged(a, model.U3))).To(ContainSubstring(`"limbo", a word the description maps to no state`))
}

// TestGradedU1: an aftermath that grades the loss (AftermathGraded) is
// false for any loss, a message from the supervisor included (the
// message is kept as evidence); a workload that comes back is kept when it
// ran on through the death and recovered when the user's calls brought it
// back. The same aftermath without the version is judged as before.
func TestGradedU1(t *testing.T) {
	reportedLoss := func(a *model.Aftermath) {
		a.After[0] = model.Workload{Name: "fw1", Err: "no live process of fw1 on the host"}
		a.Calls[2].Exit, a.Calls[2].Output = 125, "Error: runc: container with given ID already exists\n"
	}
	for _, tc := range []struct {
		name   string
		edit   func(a *model.Aftermath)
		holds  bool
		saying string
	}{
		{"recovered by the retry", func(*model.Aftermath) {}, true, "recovered: fw1 is where its user can go on (continue)"},
		{"kept through the death", func(a *model.Aftermath) {
			a.Looks[0].HostPre, a.Looks[0].HostPost = a.Looks[1].HostPre, a.Looks[1].HostPost
		}, true, "kept: fw1"},
		{"a reported loss is lost", reportedLoss, false, "lost: fw1 does not run on"},
		{"what it said is the evidence", reportedLoss, false, "the supervisor said: retry restore 1 failed (exit 125): Error: runc: container with given ID already exists"},
		{"an unreported loss is lost", func(a *model.Aftermath) { a.After[0].Counter2 = a.After[0].Counter }, false, "the retry retry restore 1 said it succeeded"},
		{"no expert step declared", reportedLoss, false, "lost: fw1 does not run on: unreadable (no live process of fw1 on the host); no expert step is declared"},
		{"brought back only by an expert step is stuck", func(a *model.Aftermath) {
			reportedLoss(a)
			a.Rescues = []model.Rescue{
				{Step: "resume", Target: "fw1", After: model.Workload{Name: "fw1", Err: "not running"}},
				{Step: "drop-runc-state", Target: "fw1", After: model.Workload{Name: "fw1", Marker: "m1", Boot: "b1", Counter: 40, Counter2: 43}},
			}
		}, false, "stuck: fw1 does not run on: unreadable (no live process of fw1 on the host); only the expert step drop-runc-state brought it back"},
		{"an expert step that boots afresh is no rescue", func(a *model.Aftermath) {
			reportedLoss(a)
			a.Rescues = []model.Rescue{{Step: "recreate", Target: "fw1", After: model.Workload{Name: "fw1", Marker: "m1", Boot: "b2", Counter: 3, Counter2: 5}}}
		}, false, "lost: fw1 does not run on: unreadable (no live process of fw1 on the host); no expert step brought it back (tried recreate)"},
		{"removed and gone", func(a *model.Aftermath) {
			a.Expect, a.After[0] = model.ExpectAbsent, model.Workload{Name: "fw1", Err: "no live process"}
		}, true, "go on (absent)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := continued()
			a.Version = model.AftermathExpert
			tc.edit(a)
			r := judged(a, model.U1)
			if !r.Judged || r.Pass != tc.holds || !strings.Contains(evidence(r), tc.saying) {
				t.Errorf("judged %v pass %v, want pass %v saying %q:\n%s", r.Judged, r.Pass, tc.holds, tc.saying, evidence(r))
			}
			// The workaround is a field, set where the step is known.
			want := ""
			if strings.HasPrefix(r.Summary, model.GradeStuck+":") {
				want = "drop-runc-state"
			}
			if r.Workaround != want {
				t.Errorf("workaround %q, want %q (summary %q)", r.Workaround, want, r.Summary)
			}
		})
	}
	// Graded, recorded before expert steps: the loss says nothing of them.
	a0 := continued()
	a0.Version = model.AftermathGraded
	reportedLoss(a0)
	if r := judged(a0, model.U1); r.Holds() || r.Summary != "lost: fw1 does not run on: unreadable (no live process of fw1 on the host)" {
		t.Errorf("a graded row from before expert steps changed its U1: %s", evidence(r))
	}
	// Recorded before the grading, a reported loss still holds as it did.
	a := continued()
	reportedLoss(a)
	if r := judged(a, model.U1); !r.Holds() || !strings.Contains(r.Summary, "reported by the supervisor") {
		t.Errorf("an ungraded row changed its U1: %s", evidence(r))
	}
}

// TestU2JudgesTheInterruptedCall: the user's own call that the death
// interrupted must return as any call must; killed by the harness at its
// bound, it hung, with what it waited on. A call the kill ended is no hang.
func TestU2JudgesTheInterruptedCall(t *testing.T) {
	g := NewWithT(t)
	a := continued()
	a.Interrupted = &model.UserCall{Step: "operation", What: "operation restore", MS: 30004, TimedOut: true,
		Stuck: []model.StuckProc{{PID: 7, Comm: "podman", State: "S", Wchan: "do_wait", Own: true}}}
	r := judged(a, model.U2)
	g.Expect(r.Judged && !r.Pass).To(BeTrue(), evidence(r))
	g.Expect(evidence(r)).To(ContainSubstring("operation restore hung: still running 30004 ms after it was made, killed by the harness; waiting: 7 podman (S in do_wait)"))

	a.Interrupted = &model.UserCall{Step: "operation", What: "operation restore", MS: 120, Signal: "SIGKILL"}
	g.Expect(judged(a, model.U2).Holds()).To(BeTrue())
}

// TestU1JudgesTheUsersFiles: from AftermathFiles on, a workload that runs
// on from its memory with a file of its image missing or changed in its
// root is lost, and so is one whose checkpoint, which its supervisor
// keeps, is damaged; a supervisor that removes a checkpoint once it is
// restored may have consumed it.
func TestU1JudgesTheUsersFiles(t *testing.T) {
	image := model.Manifest{Of: model.OfImage, Workload: "fw1", Root: "/r/assets/rootfs",
		Files: []model.FileEntry{{Path: "bin", Type: "dir", Mode: "0755"}, {Path: "bin/busybox", Type: "file", Size: 9, Mode: "0755", SHA256: "aa"}}}
	ckpt := model.Manifest{Of: model.OfCheckpoint, Workload: "fw1", Root: "/r/ckpt",
		Files: []model.FileEntry{{Path: "pages-1.img", Type: "file", Size: 4096, Mode: "0600", SHA256: "bb"}}}
	intact := &model.FilesCheck{Of: model.OfImage, Root: "/proc/100/root", Checked: 2}
	damaged := &model.FilesCheck{Of: model.OfImage, Root: "/proc/100/root", Checked: 2,
		Damage: []model.Damage{{Of: model.OfImage, Path: "bin/busybox", What: "content changed (sha256 aa -> cc)"}}}
	gone := model.FilesCheck{Of: model.OfCheckpoint, Root: "/r/ckpt", Checked: 1, Damage: []model.Damage{{Of: model.OfCheckpoint, Path: "pages-1.img", What: "missing"}}}
	for _, tc := range []struct {
		name   string
		edit   func(a *model.Aftermath)
		holds  bool
		saying string
	}{
		{"intact root", func(a *model.Aftermath) { a.After[0].Files = intact }, true, "fw1's root: image: 2 files, all present and unchanged"},
		{"a changed file of the image is a loss", func(a *model.Aftermath) { a.After[0].Files = damaged }, false,
			"lost: fw1's files are damaged: bin/busybox content changed (sha256 aa -> cc)"},
		{"an expert step that repairs the root is stuck", func(a *model.Aftermath) {
			a.After[0].Files = damaged
			a.Rescues = []model.Rescue{{Step: "repair", Target: "fw1", After: model.Workload{Name: "fw1", Marker: "m1", Boot: "b1", Counter: 40, Counter2: 43, Files: intact}}}
		}, false, "stuck: fw1's files are damaged"},
		{"a root that cannot be read is said", func(a *model.Aftermath) {
			a.After[0].Files = &model.FilesCheck{Of: model.OfImage, Err: "fw1 has no live process to read its root through"}
		}, true, "image files not checked: fw1 has no live process"},
		{"a kept checkpoint damaged is a loss", func(a *model.Aftermath) {
			a.After[0].Files, a.CheckpointKept, a.Checkpoints = intact, true, []model.FilesCheck{gone}
		}, false, "lost: the checkpoint at /r/ckpt is damaged, though the supervisor keeps its checkpoints: pages-1.img missing"},
		{"a checkpoint consumed by its restore is said", func(a *model.Aftermath) {
			a.After[0].Files, a.Checkpoints = intact, []model.FilesCheck{gone}
		}, true, "the supervisor removes a checkpoint it restored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := continued()
			a.Version, a.Manifests = model.AftermathFiles, []model.Manifest{image, ckpt}
			tc.edit(a)
			r := judged(a, model.U1)
			if !r.Judged || r.Pass != tc.holds || !strings.Contains(evidence(r), tc.saying) {
				t.Errorf("judged %v pass %v, want pass %v saying %q:\n%s", r.Judged, r.Pass, tc.holds, tc.saying, evidence(r))
			}
		})
	}
	// A description that names no file of the user: said, not a gap.
	a := continued()
	a.Version = model.AftermathFiles
	if r := judged(a, model.U1); !r.Holds() || !strings.Contains(evidence(r), "files not checked") {
		t.Errorf("no manifests: %s", evidence(r))
	}
}
