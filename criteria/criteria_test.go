package criteria_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	. "faultwin/criteria/matchers"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

func TestP1(t *testing.T) {
	t.Run("zombie criu is reported, not a survivor", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		z := live(4242, 1190518, "criu")
		z.State, z.Cwd = "Z", ""
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Processes = append(s.Processes, z) })
		r := result(t, in, model.P1)
		g.Expect(r).To(Hold())
		g.Expect(r).To(HaveEvidence("pid 4242 (start 1190518) criu state=Z: comm criu (in after_sweep, after_sweep2): zombie, not a live survivor"))
		g.Expect(r.Summary).To(ContainSubstring("1 zombie"))
		g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusPass))
	})
	t.Run("an exiting pid-namespace init is not a live survivor, its live member is", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		// The init took its SIGKILL and waits for a member of its pid
		// namespace that will not die (frozen): only the member fails P1.
		init := live(5100, 1190600, "sh")
		init.State, init.Exiting, init.Cwd, init.NSpid = "S", true, "", []int{5100, 1}
		init.NS = map[string]uint64{"pid": 4026532900}
		member := live(5101, 1190601, "sleep", "sleep", "3600")
		member.RunEnv, member.NSpid = "r1", []int{5101, 2}
		member.NS = map[string]uint64{"pid": 4026532900}
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Processes = append(s.Processes, init, member) })
		r := result(t, in, model.P1)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("pid 5101 (start 1190601) sleep"))
		g.Expect(r.Summary).To(HavePrefix("1 live"))

		// With the member gone, the exiting init alone, tag and all, is not
		// a survivor; the same task not exiting is one.
		init.Argv = []string{"/bin/sh", "-c", "loop", "refsup-session", "--tag", "faultwin:r1"}
		in = passing(t)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Processes = append(s.Processes, init) })
		g.Expect(result(t, in, model.P1)).To(Hold())
		init.Exiting = false
		in = passing(t)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Processes = append(s.Processes, init) })
		g.Expect(result(t, in, model.P1)).NotTo(Hold())
	})
	t.Run("any live criu fails, of the run or not", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep2.Processes = append(in.AfterSweep2.Processes, live(7001, 3, "criu", "criu", "check"))
		r := result(t, in, model.P1)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence(`pid 7001 (start 3) criu argv="criu check" cwd=/: comm criu (in after_sweep2)`))
	})
	t.Run("a survivor gone by the second snapshot still fails", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep.Processes = append(in.AfterSweep.Processes, live(4150, 1190311, "refsup", "refsup", "--tag", "faultwin:r1"))
		r := result(t, in, model.P1)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("argv tag (in after_sweep)"))
	})
	t.Run("prefix-colliding tag is not of the run", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		afterBoth(&in, func(s *snapshots.Snapshot) {
			s.Processes = append(s.Processes, live(8000, 4, "sh", "sh", "--tag", "faultwin:r10"))
		})
		g.Expect(result(t, in, model.P1)).To(Hold())
	})
	t.Run("unreadable live process cannot be ruled out", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		p := snapshots.Process{PID: 8100, StartTime: 5, State: "S", Comm: "bash", Unreadable: "environ: permission denied"}
		in.AfterSweep2.Processes = append(in.AfterSweep2.Processes, p)
		r := result(t, in, model.P1)
		g.Expect(r).To(BeUnjudged())
		g.Expect(r).To(HaveEvidence("after_sweep2: pid 8100 (start 5) bash unreadable (environ: permission denied): cannot rule out"))
		g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusInvalid))
	})
}

func TestP2(t *testing.T) {
	cases := []struct {
		name  string
		m     snapshots.Mount
		decoy bool
		hold  bool
		line  string
	}{
		{name: "overlay under state dir", m: snapshots.Mount{MountPoint: "/var/lib/faultwin/r1/sessions/s1/root", FSType: "overlay"},
			line: "mount /var/lib/faultwin/r1/sessions/s1/root (overlay): under state dir (in after_sweep, after_sweep2)"},
		{name: "foreign mount", m: snapshots.Mount{MountPoint: "/var/lib/faultwin/r1/sessions/s2/root", FSType: "overlay", Foreign: true, NS: 4026532900, SeenVia: 4242},
			line: "mount /var/lib/faultwin/r1/sessions/s2/root (overlay, ns 4026532900 via pid 4242): under state dir"},
		{name: "unlisted mount in another run's dir", m: snapshots.Mount{MountPoint: "/var/lib/faultwin/r10/stage", FSType: "tmpfs"},
			line: "mount /var/lib/faultwin/r10/stage (tmpfs): under state root"},
		{name: "criu staging mount", m: snapshots.Mount{MountPoint: "/tmp/.criu.mntns.Xq3kPa", FSType: "tmpfs"},
			line: "mount /tmp/.criu.mntns.Xq3kPa (tmpfs): criu tmp dir"},
		{name: "decoy listed by path", m: snapshots.Mount{MountPoint: "/var/lib/faultwin/r1/unrecorded", FSType: "tmpfs"}, decoy: true, hold: true},
		{name: "state root itself", m: snapshots.Mount{MountPoint: "/var/lib/faultwin", FSType: "tmpfs"}, hold: true},
		{name: "tmp lookalike", m: snapshots.Mount{MountPoint: "/tmp/.criuX", FSType: "tmpfs"}, hold: true},
		{name: "unrelated", m: snapshots.Mount{MountPoint: "/var/lib/faultwin-other/x", FSType: "tmpfs"}, hold: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := passing(t)
			if tc.decoy {
				in.Decoys.Mounts = append(in.Decoys.Mounts, tc.m.MountPoint)
			}
			afterBoth(&in, func(s *snapshots.Snapshot) { s.Mounts = append(s.Mounts, tc.m) })
			r := result(t, in, model.P2)
			if tc.hold {
				g.Expect(r).To(Hold())
				return
			}
			g.Expect(r).NotTo(Hold())
			g.Expect(r).To(HaveEvidence(tc.line))
		})
	}
	t.Run("criu tmp dir left", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep2.CRIUTmp = []snapshots.File{{Path: "/tmp/.criu.mntns.Xq3kPa", Kind: "dir"}}
		g.Expect(result(t, in, model.P2)).To(HaveEvidence("criu tmp /tmp/.criu.mntns.Xq3kPa (dir) (in after_sweep2)"))
	})
	t.Run("host and foreign copies are one finding", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep2.Mounts = append(in.AfterSweep2.Mounts,
			snapshots.Mount{MountPoint: "/var/lib/faultwin/r1/sessions/s1/root", FSType: "overlay"},
			snapshots.Mount{MountPoint: "/var/lib/faultwin/r1/sessions/s1/root", FSType: "overlay", Foreign: true, NS: 7})
		g.Expect(result(t, in, model.P2).Evidence).To(HaveLen(1))
	})
}

func TestP3(t *testing.T) {
	cases := []struct {
		name string
		edit func(in *criteria.Input, s *snapshots.Snapshot)
		hold bool
		line string
	}{
		{name: "veth left", edit: func(_ *criteria.Input, s *snapshots.Snapshot) {
			s.Links = append(s.Links, snapshots.Link{Name: "dvh2", Kind: "veth"})
		}, line: "link dvh2 (veth)"},
		{name: "run table in another family", edit: func(_ *criteria.Input, s *snapshots.Snapshot) {
			s.Tables = append(s.Tables, snapshots.Table{Family: "inet", Name: "faultwin_r1"})
		}, line: "table inet faultwin_r1"},
		{name: "CRIU lock table", edit: func(_ *criteria.Input, s *snapshots.Snapshot) {
			s.Tables = append(s.Tables, snapshots.Table{Family: "inet", Name: "CRIU-4201"})
		}, line: "table inet CRIU-4201"},
		{name: "cgroup of the run", edit: func(_ *criteria.Input, s *snapshots.Snapshot) {
			s.Cgroups = append(s.Cgroups, "/sys/fs/cgroup/pids/faultwin", "/sys/fs/cgroup/pids/faultwin/r1", "/sys/fs/cgroup/pids/faultwin/r10")
		}, line: "cgroup /sys/fs/cgroup/pids/faultwin/r1 of the run"},
		{name: "another run's cgroup and the shared parent", edit: func(_ *criteria.Input, s *snapshots.Snapshot) {
			s.Cgroups = append(s.Cgroups, "/sys/fs/cgroup/pids/faultwin", "/sys/fs/cgroup/pids/faultwin/r10/s1")
		}, hold: true},
		{name: "another run's table", edit: func(_ *criteria.Input, s *snapshots.Snapshot) {
			s.Tables = append(s.Tables, snapshots.Table{Family: "ip", Name: "faultwin_r10"})
		}, hold: true},
		{name: "X11 socket of the run's display", edit: func(in *criteria.Input, s *snapshots.Snapshot) {
			in.Scope.Displays = []int{91}
			s.X11 = append(s.X11, snapshots.File{Path: "/tmp/.X11-unix/X91", Kind: "socket"}, snapshots.File{Path: "/tmp/.X910-lock", Kind: "file"})
		}, line: "x11 /tmp/.X11-unix/X91 (socket): display :91 of the run"},
		{name: "X11 lock of the run's display", edit: func(in *criteria.Input, s *snapshots.Snapshot) {
			in.Scope.Displays = []int{91}
			s.X11 = append(s.X11, snapshots.File{Path: "/tmp/.X91-lock", Kind: "file"})
		}, line: "x11 /tmp/.X91-lock (file): display :91 of the run"},
		{name: "X11 symlink into the state dir", edit: func(_ *criteria.Input, s *snapshots.Snapshot) {
			s.X11 = append(s.X11, snapshots.File{Path: "/tmp/.X11-unix/X92", Kind: "symlink", Target: "/var/lib/faultwin/r1/sessions/s1/x11/X0"})
		}, line: "x11 /tmp/.X11-unix/X92 (symlink) -> /var/lib/faultwin/r1/sessions/s1/x11/X0: under state dir"},
		{name: "other displays", edit: func(in *criteria.Input, s *snapshots.Snapshot) {
			in.Scope.Displays = []int{91}
			s.X11 = append(s.X11, snapshots.File{Path: "/tmp/.X11-unix/X910", Kind: "socket"}, snapshots.File{Path: "/tmp/.X11-unix/X0", Kind: "socket"})
		}, hold: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := passing(t)
			tc.edit(&in, &in.AfterSweep2)
			r := result(t, in, model.P3)
			if tc.hold {
				g.Expect(r).To(Hold())
				return
			}
			g.Expect(r).NotTo(Hold())
			g.Expect(r).To(HaveEvidence(tc.line))
		})
	}
}

func TestP4(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	in.AfterSweep2.Ledgers = append(in.AfterSweep2.Ledgers, snapshots.File{Path: "/var/lib/faultwin/r1/sessions/s1/ledger.json", Kind: "file"})
	r := result(t, in, model.P4)
	g.Expect(r).NotTo(Hold())
	g.Expect(r).To(HaveEvidence("ledger /var/lib/faultwin/r1/sessions/s1/ledger.json (file) (in after_sweep2)"))

	in = passing(t)
	in.Scope.Ledger = ""
	g.Expect(result(t, in, model.P4)).To(BeUnjudged())
}

func TestP5(t *testing.T) {
	t.Run("decoy left a zombie", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep2.Processes[0].State = "Z"
		g.Expect(result(t, in, model.P5)).To(HaveEvidence("decoy pid 3907 (start 1182044) faultwin:r10 is a zombie (state Z)"))
	})
	t.Run("decoy pid reused", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep2.Processes[0].StartTime = 1200000
		g.Expect(result(t, in, model.P5)).To(HaveEvidence("gone (pid reused by pid 3907 (start 1200000))"))
	})
	t.Run("decoy file removed", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep2.Extra = nil
		g.Expect(result(t, in, model.P5)).To(HaveEvidence("decoy file /var/lib/faultwin/r10/ledger.json gone"))
	})
	t.Run("decoy mount left only in a foreign namespace", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.AfterSweep2.Mounts[0].Foreign, in.AfterSweep2.Mounts[0].NS = true, 4026532799
		g.Expect(result(t, in, model.P5)).To(HaveEvidence("decoy mount /var/lib/faultwin/r10/mnt gone"))
	})
	t.Run("no decoys planted proves nothing", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Decoys = snapshots.Decoys{}
		g.Expect(result(t, in, model.P5)).To(BeUnjudged())
	})
}

func TestP6(t *testing.T) {
	t.Run("process appears between sweeps", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		p := live(4300, 1191000, "criu", "criu", "swrk", "3")
		p.RunEnv = "r1"
		in.AfterSweep2.Processes = append(in.AfterSweep2.Processes, p)
		g.Expect(result(t, in, model.P6)).To(HaveEvidence(`appeared between sweeps: pid 4300 (start 1191000) criu argv="criu swrk 3" cwd=/: env tag, comm criu`))
	})
	t.Run("second sweep killed a survivor", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Sweep2.Killed = []model.Killed{{PID: model.PID{PID: 4242, StartTime: 1190518}, Comm: "criu", Why: "env tag"}}
		r := result(t, in, model.P6)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("second sweep killed pid 4242 (start 1190518) criu: env tag"))
	})
	t.Run("second sweep errors", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Sweep2.Errors = []string{"reading ledger: unexpected EOF"}
		g.Expect(result(t, in, model.P6)).To(HaveEvidence("second sweep error: reading ledger: unexpected EOF"))
	})
	t.Run("missing second sweep is not a no-op", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Sweep2 = model.SweepReport{}
		g.Expect(result(t, in, model.P6)).To(BeUnjudged())
	})
	t.Run("a zombie reaped between sweeps is no change", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		z := live(4242, 1190518, "criu")
		z.State = "Z"
		in.AfterSweep.Processes = append(in.AfterSweep.Processes, z)
		g.Expect(result(t, in, model.P6)).To(Hold())
	})
}

// O1 must never count the harness's own decoys (a harness that did failed
// O1 on all 8 windows), and must still catch a real
// unledgered mount.
func TestO1Decoys(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	sibling := snapshots.Mount{MountPoint: "/var/lib/faultwin/r10/stage", FSType: "tmpfs", Source: "faultwin-decoy"}
	inside := snapshots.Mount{MountPoint: "/var/lib/faultwin/r1/unrecorded", FSType: "tmpfs", Source: "faultwin-decoy"}
	in.AfterDeath.Mounts = append(in.AfterDeath.Mounts, sibling, inside)
	in.Decoys.Mounts = append(in.Decoys.Mounts, inside.MountPoint)
	// Neither carries the capture's decoy flag: exclusion rests on path
	// components (r10 is not r1) and the decoy list alone.
	r := result(t, in, model.O1)
	g.Expect(r).To(Hold())
	g.Expect(r).To(HaveEvidence("1 decoy mount under the state dir not counted"))
	g.Expect(r.Summary).To(Equal("6 mounts under the state dir at death, all ledgered"))

	real := snapshots.Mount{MountPoint: "/var/lib/faultwin/r1/sessions/s3/root", FSType: "overlay"}
	in.AfterDeath.Mounts = append(in.AfterDeath.Mounts, real, snapshots.Mount{MountPoint: real.MountPoint + "/", FSType: "overlay", Foreign: true, NS: 9})
	r = result(t, in, model.O1)
	g.Expect(r).NotTo(Hold())
	g.Expect(r.Evidence).To(Equal([]string{
		"mount /var/lib/faultwin/r1/sessions/s3/root (overlay) not in ledger",
		"1 decoy mount under the state dir not counted",
	}))
	g.Expect(r.Summary).To(Equal("1 of 7 mounts under the state dir not in the ledger"))
}

func TestH1(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	delete(in.AfterSweep2.Sysctls, "net.ipv4.ip_forward")
	g.Expect(result(t, in, model.H1)).To(BeUnjudged())
	in = passing(t)
	in.Roots.Sysctls = nil
	g.Expect(result(t, in, model.H1)).To(BeUnjudged())
}

func TestF1(t *testing.T) {
	t.Run("another point fired", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Trace[len(in.Trace)-1].Point = "restore.criu_started"
		r := result(t, in, model.F1)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("armed point restore.during_criu never fired"))
		g.Expect(r).To(HaveEvidence("fired restore.criu_started at 2026-11-30T10:33:51.998Z (pid 4100): criu pid 4201 killed first (err=<nil>), not the armed point"))
		g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusInvalid))
	})
	// A held CRIU is the window: a timed kill that found CRIU finished
	// measured a finished capture, not a capture in flight.
	t.Run("no CRIU left to hold", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Window.Fault.Kill = model.KillCRIUHeld
		in.Trace[len(in.Trace)-1].Note = model.NoteNoCRIUToHold
		r := result(t, in, model.F1)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("kill criu_held found no CRIU running to stop: CRIU had finished before the kill landed"))
		g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusInvalid))
		in.Trace[len(in.Trace)-1].Note = "criu pid 4201 stopped and left alive (err=<nil>)"
		g.Expect(result(t, in, model.F1)).To(Hold())
	})
	t.Run("not reaped", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Death.Reaped = false
		g.Expect(result(t, in, model.F1)).To(HaveEvidence("supervisor not reaped: its death is not confirmed"))
	})
	t.Run("operation returned", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Death = model.Death{Reaped: true, OpErr: "restore: criu: exit status 1"}
		g.Expect(result(t, in, model.F1)).To(HaveEvidence(`supervisor was not killed: exit code 0, operation returned "restore: criu: exit status 1"`))
	})
	t.Run("SIGKILL spellings", func(t *testing.T) {
		for _, s := range []string{"killed", "SIGKILL", "KILL", "9"} {
			in := passing(t)
			in.Death.Signal = s
			NewWithT(t).Expect(result(t, in, model.F1)).To(Hold(), s)
		}
	})
	t.Run("trace in env form", func(t *testing.T) {
		in := passing(t)
		in.Trace[len(in.Trace)-1].Point = in.Window.Fault.String()
		NewWithT(t).Expect(result(t, in, model.F1)).To(Hold())
	})
	// An external trigger's role can name two processes, one of them dying
	// on its own between the trigger's look and the kill (podman restore:
	// the checkpointed container's conmon). Rows recorded before Exited
	// existed keep their verdict: replay must not change them.
	t.Run("a victim already exiting", func(t *testing.T) {
		g := NewWithT(t)
		at := time.Date(2026, 12, 1, 8, 38, 57, 0, time.UTC)
		exited := model.Victim{Role: "conmon", PID: model.PID{PID: 2882, StartTime: 10}, Comm: "conmon",
			Gone: true, Exited: true, Err: "already exited before the kill"}
		killed := model.Victim{Role: "conmon", PID: model.PID{PID: 3031, StartTime: 12}, Comm: "conmon",
			KilledAt: at, Gone: true}
		in := passing(t)
		in.Death = model.Death{Reaped: true, OpErr: "exit status 125", Victims: []model.Victim{exited, killed}}
		r := result(t, in, model.F1)
		g.Expect(r).To(Hold())
		g.Expect(r).To(HaveEvidence("conmon conmon pid 2882 was already exiting when its kill came (not this fault's victim); another conmon was killed"))
		in.Death.Victims = []model.Victim{exited}
		g.Expect(result(t, in, model.F1)).To(HaveEvidence("conmon conmon pid 2882: already exited before the kill"))
		g.Expect(result(t, in, model.F1)).NotTo(Hold())
		legacy := exited
		legacy.Exited = false
		in.Death.Victims = []model.Victim{legacy, killed}
		g.Expect(result(t, in, model.F1)).NotTo(Hold())
	})
	// A window that names its landing phase is INVALID when the kill landed
	// in another: runc's first CRIU only reads CRIU's version, and a window
	// aimed at the restoring CRIU that killed it measured something else.
	t.Run("landing outside the named phase", func(t *testing.T) {
		g := NewWithT(t)
		at := time.Date(2026, 12, 1, 8, 38, 57, 0, time.UTC)
		in := passing(t)
		in.Death = model.Death{Reaped: true, OpErr: "exit status 125", Victims: []model.Victim{
			{Role: "criu", PID: model.PID{PID: 20984, StartTime: 12}, Comm: "criu", KilledAt: at, Gone: true}}}
		in.Death.Landing = &model.Landing{Phase: "criu_version_check", Seen: []model.PhaseSeen{
			{Name: "podman_prepares", At: at}, {Name: "criu_version_check", At: at, Evidence: "criu_any pid 20984 (criu) appeared"}}}
		g.Expect(result(t, in, model.F1)).To(Hold(), "a window that names no phase only notes the landing")
		g.Expect(result(t, in, model.F1)).To(HaveEvidence("kill landed in phase criu_version_check"))
		in.Window.Fault.LandsIn = "criu_reading_images"
		r := result(t, in, model.F1)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("the window must land in criu_reading_images"))
		g.Expect(criteria.Evaluate(in).Status).To(Equal(model.StatusInvalid))
		in.Death.Landing.Phase = "criu_reading_images"
		g.Expect(result(t, in, model.F1)).To(Hold())
		in.Death.Landing = nil
		g.Expect(result(t, in, model.F1)).To(HaveEvidence("no landing was recorded"))
	})
}

func TestStatusPrecedence(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(in *criteria.Input)
		status string
		reason string
	}{
		{"harness error beats everything", func(in *criteria.Input) {
			in.HarnessErr = "snapshot after_sweep: capturing processes: open /proc: too many open files"
			in.AfterSweep2.Links = []snapshots.Link{{Name: "dvh1"}}
			in.Preflight.Ledgers = []snapshots.File{{Path: "/var/lib/faultwin/r0/ledger.json"}}
		}, model.StatusError, "harness error: snapshot after_sweep: capturing processes: open /proc: too many open files"},
		{"unclean preflight beats failures", func(in *criteria.Input) {
			in.Preflight.Ledgers = []snapshots.File{{Path: "/var/lib/faultwin/r0/ledger.json", Kind: "file"}}
			in.AfterSweep2.Links = []snapshots.Link{{Name: "dvh1"}}
		}, model.StatusInvalid, "preflight: 1 leftover of a faultwin run at preflight"},
		{"precondition not reached", func(in *criteria.Input) {
			in.PrepareErr = "checkpoint of s1: criu dump: exit status 1"
		}, model.StatusInvalid, "precondition not reached: checkpoint of s1: criu dump: exit status 1"},
		{"incomplete snapshot is never a pass", func(in *criteria.Input) {
			in.AfterSweep2.Incomplete = []string{"nftables: netlink: operation not permitted"}
		}, model.StatusInvalid, ""},
		{"incomplete snapshot beats a failure it also shows", func(in *criteria.Input) {
			in.AfterSweep2.Incomplete = []string{"mounts of pid 4150: no such process"}
			in.AfterSweep2.Links = []snapshots.Link{{Name: "dvh1"}}
		}, model.StatusInvalid, ""},
		{"a snapshot never taken is never a pass", func(in *criteria.Input) {
			in.AfterSweep2 = snapshots.Snapshot{}
		}, model.StatusInvalid, ""},
		{"swapped snapshots are not judged", func(in *criteria.Input) {
			in.AfterSweep, in.AfterSweep2 = in.AfterSweep2, in.AfterSweep
		}, model.StatusInvalid, ""},
		{"unknown criterion is not judged", func(in *criteria.Input) {
			in.Window.Criteria = append(in.Window.Criteria, "R9")
		}, model.StatusInvalid, "R9 (not judged: no evaluator for criterion R9)"},
		{"failure", func(in *criteria.Input) {
			in.AfterSweep2.Links = []snapshots.Link{{Name: "dvh1"}}
			in.AfterSweep2.Sysctls = map[string]string{"net.ipv4.ip_forward": "1"}
		}, model.StatusFail, "P3, P6, H1 false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := passing(t)
			tc.edit(&in)
			v := criteria.Evaluate(in)
			g.Expect(v).To(HaveStatus(tc.status))
			if tc.reason != "" {
				g.Expect(v.Reason).To(Equal(tc.reason))
			}
		})
	}
}

// The gatekeepers run for every window, listed or not, once each, first.
func TestGatekeepersAlwaysRun(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	in.Window.Criteria = []string{"p1", "F1", "P1", " H1 "}
	var ids []string
	for _, r := range criteria.Evaluate(in).Results {
		ids = append(ids, r.ID)
	}
	g.Expect(ids).To(Equal([]string{"PRE", "F1", "P1", "H1"}))
	g.Expect(criteria.Known("p6")).To(BeTrue())
	g.Expect(criteria.Known("R1")).To(BeTrue())
	g.Expect(criteria.Known("R5")).To(BeFalse())
	g.Expect(criteria.IDs()).To(HaveLen(len(criteria.Registered())))
}

func TestLeftovers(t *testing.T) {
	roots := snapshots.DefaultRoots("/var/lib/faultwin")
	g := NewWithT(t)
	g.Expect(criteria.Leftovers(snapshots.Snapshot{Label: "preflight", TakenAt: time.Unix(1, 0),
		X11:       []snapshots.File{{Path: "/tmp/.X11-unix/X0", Kind: "socket"}},
		Tables:    []snapshots.Table{{Family: "inet", Name: "filter"}},
		Processes: []snapshots.Process{live(900, 1, "sh", "sh", "--tag", "notfaultwin:r1")},
	}, roots)).To(BeEmpty())

	tagged := live(901, 2, "sleep", "sleep", "--tag", "faultwin:r7")
	env := live(902, 3, "Xvfb", "Xvfb", ":91")
	env.RunEnv = "r7"
	unreadable := snapshots.Process{PID: 903, StartTime: 4, State: "S", Comm: "sh", Unreadable: "cwd: permission denied"}
	zombie := snapshots.Process{PID: 904, StartTime: 5, State: "Z", Comm: "sh", Unreadable: "cwd: no such process"}
	s := snapshots.Snapshot{
		Label: "preflight", TakenAt: time.Unix(1, 0),
		Processes:  []snapshots.Process{tagged, env, live(905, 6, "criu", "criu", "swrk", "3"), unreadable, zombie},
		Mounts:     []snapshots.Mount{{MountPoint: "/var/lib/faultwin/r7/sessions/s1/root", FSType: "overlay"}, {MountPoint: "/tmp/.criu.mntns.a1", FSType: "tmpfs"}, {MountPoint: "/var/lib/faultwin", FSType: "ext4"}},
		Links:      []snapshots.Link{{Name: "dvh3", Kind: "veth"}, {Name: "eth0"}},
		Tables:     []snapshots.Table{{Family: "ip", Name: "faultwin_r7"}, {Family: "inet", Name: "CRIU-77"}, {Family: "inet", Name: "filter"}},
		X11:        []snapshots.File{{Path: "/tmp/.X11-unix/X91", Kind: "symlink", Target: "/var/lib/faultwin/r7/sessions/s1/x11/X0"}},
		Ledgers:    []snapshots.File{{Path: "/var/lib/faultwin/r7/ledger.json", Kind: "file"}},
		CRIUTmp:    []snapshots.File{{Path: "/tmp/.criu.mntns.a1", Kind: "dir"}},
		Incomplete: []string{"cgroups: read /sys/fs/cgroup: permission denied"},
	}
	g.Expect(criteria.Leftovers(s, roots)).To(Equal([]string{
		"incomplete: cgroups: read /sys/fs/cgroup: permission denied",
		"pid 903 (start 4) sh unreadable (cwd: permission denied): cannot rule out",
		`pid 901 (start 2) sleep argv="sleep --tag faultwin:r7" cwd=/: argv tag faultwin:r7 [live]`,
		`pid 902 (start 3) Xvfb argv="Xvfb :91" cwd=/: env tag r7 [live]`,
		`pid 905 (start 6) criu argv="criu swrk 3" cwd=/: comm criu [live]`,
		"mount /var/lib/faultwin/r7/sessions/s1/root (overlay): under state root",
		"mount /tmp/.criu.mntns.a1 (tmpfs): criu tmp dir",
		"link dvh3 (veth)",
		"table ip faultwin_r7",
		"table inet CRIU-77",
		"x11 /tmp/.X11-unix/X91 (symlink) -> /var/lib/faultwin/r7/sessions/s1/x11/X0: into state root",
		"ledger /var/lib/faultwin/r7/ledger.json (file)",
		"criu tmp /tmp/.criu.mntns.a1 (dir)",
	}))

	g.Expect(criteria.Leftovers(snapshots.Snapshot{}, snapshots.Roots{})).To(ConsistOf(
		`roots: unusable state root ""`, `roots: unusable tmp dir ""`, "roots: no link prefix", "roots: no table prefix"))
}

// TestLeftoversOwnershipModel: what a dead run leaves without a tag of its
// own is still a leftover, named with its state; each case here was missed
// by a preflight that matched tags, criu and cwd only.
func TestLeftoversOwnershipModel(t *testing.T) {
	roots := snapshots.DefaultRoots("/var/lib/faultwin")
	pre := func(ps []snapshots.Process, ms []snapshots.Mount, cgs []string) []string {
		return criteria.Leftovers(snapshots.Snapshot{Label: "preflight", TakenAt: time.Unix(1, 0),
			Processes: ps, Mounts: ms, Cgroups: cgs}, roots)
	}
	// A session's init (env tag) in its own pid and mount namespaces.
	init := live(2000, 10, "session-init", "session-init")
	init.RunEnv, init.NSpid = "r7", []int{2000, 1}
	init.NS = map[string]uint64{"pid": 4001, "mnt": 5001}

	t.Run("untagged member of a run's pid namespace", func(t *testing.T) {
		child := live(2001, 11, "payload", "payload")
		child.NSpid = []int{2001, 7}
		child.NS = map[string]uint64{"pid": 4001, "mnt": 5001}
		NewWithT(t).Expect(pre([]snapshots.Process{init, child}, nil, nil)).To(ContainElement(
			`pid 2001 (start 11) payload argv="payload" cwd=/: pid ns of pid 2000 [live]`))
	})
	t.Run("host process in a session's mount namespace only", func(t *testing.T) {
		entered := live(2100, 12, "sh", "sh")
		entered.NSpid = []int{2100}
		entered.NS = map[string]uint64{"pid": 4000, "mnt": 5001}
		NewWithT(t).Expect(pre([]snapshots.Process{init, entered}, nil, nil)).To(ContainElement(
			`pid 2100 (start 12) sh argv="sh" cwd=/: mount ns of pid 2000 [live]`))
	})
	t.Run("mount namespace holding a mount under the state root", func(t *testing.T) {
		entered := live(2100, 12, "sh", "sh")
		entered.NSpid = []int{2100}
		entered.NS = map[string]uint64{"pid": 4000, "mnt": 5009}
		m := snapshots.Mount{MountPoint: "/var/lib/faultwin/r7/s1/root", FSType: "overlay", NS: 5009, Foreign: true, SeenVia: 2100}
		NewWithT(t).Expect(pre([]snapshots.Process{entered}, []snapshots.Mount{m}, nil)).To(ContainElement(
			`pid 2100 (start 12) sh argv="sh" cwd=/: mount ns holds /var/lib/faultwin/r7/s1/root [live]`))
	})
	t.Run("tagged zombie, with its parent", func(t *testing.T) {
		parent := live(2200, 13, "refsup", "refsup", "serve", "--tag", "faultwin:r7")
		z := snapshots.Process{PID: 2201, StartTime: 14, PPID: 2200, State: "Z", Comm: "criu"}
		NewWithT(t).Expect(pre([]snapshots.Process{parent, z}, nil, nil)).To(ContainElement(
			`pid 2201 (start 14) criu state=Z: comm criu [zombie, parent pid 2200 refsup]`))
		orphan := snapshots.Process{PID: 2202, StartTime: 15, PPID: 2200, State: "Z", Comm: "sleep"}
		NewWithT(t).Expect(pre([]snapshots.Process{parent, orphan}, nil, nil)).To(ContainElement(
			`pid 2202 (start 15) sleep state=Z: zombie of pid 2200 [zombie, parent pid 2200 refsup]`))
	})
	t.Run("stopped process of a run", func(t *testing.T) {
		p := live(2300, 16, "sleep", "sleep", "--tag", "faultwin:r7")
		p.State = "T"
		NewWithT(t).Expect(pre([]snapshots.Process{p}, nil, nil)).To(ContainElement(HaveSuffix("[stopped]")))
	})
	t.Run("leaked cgroup and a process in it", func(t *testing.T) {
		p := live(2400, 17, "sleep", "sleep")
		p.Cgroups = []string{"/faultwin/r7/s1"}
		NewWithT(t).Expect(pre([]snapshots.Process{p}, nil,
			[]string{"/sys/fs/cgroup/pids/faultwin", "/sys/fs/cgroup/pids/faultwin/r7", "/sys/fs/cgroup/pids/faultwin/r7/s1"})).To(Equal([]string{
			`pid 2400 (start 17) sleep argv="sleep" cwd=/: in cgroup /faultwin/r7/s1 [live]`,
			"cgroup /sys/fs/cgroup/pids/faultwin/r7: of run r7",
			"cgroup /sys/fs/cgroup/pids/faultwin/r7/s1: of run r7",
		}))
	})
	t.Run("an unrelated process stays out", func(t *testing.T) {
		other := live(2500, 18, "sh", "sh")
		other.NSpid = []int{2500}
		other.NS = map[string]uint64{"pid": 4000, "mnt": 5000}
		NewWithT(t).Expect(pre([]snapshots.Process{init, other}, nil, []string{"/sys/fs/cgroup/pids/faultwin"})).To(HaveLen(1))
	})
}

// TestPrepareFailureNamedFirst: when the precondition failed and the
// harness's later steps failed because of it, the reason leads with the
// precondition, which is what a reader must fix.
func TestPrepareFailureNamedFirst(t *testing.T) {
	in := passing(t)
	in.PrepareErr = "fork/exec ./bin/refsup: no such file or directory"
	in.HarnessErr = "sweep 1: refsup sweep: exit status 1"
	v := criteria.Evaluate(in)
	NewWithT(t).Expect(v.Status).To(Equal(model.StatusError))
	NewWithT(t).Expect(v.Reason).To(HavePrefix("precondition not reached: fork/exec ./bin/refsup"))
}

// A second sweep that still removes a cgroup did work: P6 is false.
func TestP6SecondSweepRemovesCgroup(t *testing.T) {
	in := passing(t)
	in.Sweep2.CgroupsRemoved = []string{"/sys/fs/cgroup/pids/faultwin/r1/s1"}
	r := result(t, in, model.P6)
	NewWithT(t).Expect(r).NotTo(Hold())
	NewWithT(t).Expect(r).To(HaveEvidence("second sweep removed cgroup /sys/fs/cgroup/pids/faultwin/r1/s1"))
}

// TestP7: an entry where the supervisor keeps a workload's state is the
// run's when it lies in the run's state dir, or under a host-global name
// the preflight did not see; another run's state dir is the preflight's
// business, and a driver that names no state leaves P7 unjudged.
func TestP7(t *testing.T) {
	g := NewWithT(t)
	state := func(in *criteria.Input) {
		in.Roots.State = []string{"{state}/runc/*", "/run/containerd/fifo/*/fw*"}
		in.Window.Criteria = append(in.Window.Criteria, model.P7)
	}
	in := passing(t)
	state(&in)
	in.Preflight.State = []snapshots.File{{Path: "/run/containerd/fifo/old/fw1-stdin", Kind: "other"}}
	in.AfterSweep2.State = []snapshots.File{
		{Path: "/run/containerd/fifo/old/fw1-stdin", Kind: "other"},
		{Path: "/var/lib/faultwin/r2/runc/abc", Kind: "dir"},
	}
	g.Expect(result(t, in, model.P7)).To(Hold())

	in.AfterSweep2.State = append(in.AfterSweep2.State,
		snapshots.File{Path: "/var/lib/faultwin/r1/runc/0123", Kind: "dir"},
		snapshots.File{Path: "/run/containerd/fifo/x9/fw1-stdout", Kind: "other"})
	r := result(t, in, model.P7)
	g.Expect(r).NotTo(Hold())
	g.Expect(r).To(HaveEvidence("state entry /var/lib/faultwin/r1/runc/0123 (dir): in the run's state dir"))
	g.Expect(r).To(HaveEvidence("state entry /run/containerd/fifo/x9/fw1-stdout (other): appeared during the run"))
	g.Expect(r.Summary).To(Equal("2 state entries of the run left after the second sweep"))

	// A lock a supervisor keeps outside its root under a path made from
	// the run's state dir is the run's by that name, even one the
	// preflight saw (an earlier window's of the same run), by name or by
	// provenance; another run's is not.
	in = passing(t)
	state(&in)
	in.Roots.State = append(in.Roots.State, "/run/tool/lock{state}/*")
	in.Preflight.State = []snapshots.File{{Path: "/run/tool/lock/var/lib/faultwin/r1/c1", Kind: "file"}}
	in.AfterSweep2.State = []snapshots.File{
		{Path: "/run/tool/lock/var/lib/faultwin/r1/c1", Kind: "file"},
		{Path: "/run/tool/lock/var/lib/faultwin/r10/c1", Kind: "file"},
	}
	for _, prov := range []bool{false, true} {
		in.Roots.ByProvenance = prov
		r = result(t, in, model.P7)
		g.Expect(r).NotTo(Hold())
		g.Expect(r.Evidence).To(ContainElement("state entry /run/tool/lock/var/lib/faultwin/r1/c1 (file): its path holds the run's state dir"))
		g.Expect(r.Summary).To(Equal("1 state entry of the run left after the second sweep"))
	}

	in = passing(t)
	in.Window.Criteria = append(in.Window.Criteria, model.P7)
	g.Expect(result(t, in, model.P7)).To(BeUnjudged())
}

// TestPreSeesStateEntries: a supervisor's state of a workload left by an
// earlier run makes the host unclean.
func TestPreSeesStateEntries(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	in.Roots.State = []string{"{state}/runc/*"}
	in.Preflight.State = []snapshots.File{{Path: "/var/lib/faultwin/r0/runc/0123", Kind: "dir"}}
	r := result(t, in, model.PRE)
	g.Expect(r).NotTo(Hold())
	g.Expect(r).To(HaveEvidence("state entry /var/lib/faultwin/r0/runc/0123 (dir): a supervisor's state of a workload, left by an earlier run"))
}

// TestF1Control: a disarmed window holds F1 when its trigger reached the
// armed point and killed nothing; one that killed, or never got there, is
// INVALID as a faulted window that missed would be.
func TestF1Control(t *testing.T) {
	control := func(t *testing.T) criteria.Input {
		in := passing(t)
		in.Window.Fault.Disarmed = true
		last := &in.Trace[len(in.Trace)-1]
		last.Point, last.Fired, last.Note = in.Window.Fault.Point, false, model.ControlNote+"; present: criu 4201"
		in.Death = model.Death{Reaped: true}
		return in
	}
	g := NewWithT(t)
	r := result(t, control(t), model.F1)
	g.Expect(r).To(Hold())
	g.Expect(r.Summary).To(Equal("control: the trigger reached restore.during_criu and killed nothing"))

	in := control(t)
	in.Death.Victims = []model.Victim{{Role: "criu", Comm: "criu", PID: model.PID{PID: 4201}}}
	g.Expect(result(t, in, model.F1)).To(HaveEvidence("a control killed criu criu pid 4201"))
	g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusInvalid))

	in = control(t)
	in.Trace = in.Trace[:len(in.Trace)-1]
	g.Expect(result(t, in, model.F1)).To(HaveEvidence("the disarmed trigger never reached restore.during_criu"))

	in = control(t)
	in.Death.Signaled, in.Death.Signal = true, "SIGKILL"
	g.Expect(result(t, in, model.F1)).NotTo(Hold())
}
