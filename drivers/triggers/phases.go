package triggers

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/model"
)

// checkPhases validates the plan's phases against its roles.
func checkPhases(p Plan, roles map[string]int) error {
	seen := map[string]bool{}
	for i, ph := range p.Phases {
		if ph.Name == "" || seen[ph.Name] {
			return fmt.Errorf("%w: phase %d is unnamed or named twice (%q)", ErrPlan, i, ph.Name)
		}
		seen[ph.Name] = true
		n := 0
		for _, r := range []string{ph.Appeared, ph.Gone, ph.Forked} {
			if r == "" {
				continue
			}
			n++
			if _, ok := roles[r]; !ok {
				return fmt.Errorf("%w: phase %q names role %q, which the plan has not", ErrPlan, ph.Name, r)
			}
		}
		for _, g := range []struct{ kind, glob string }{{"cgroup", ph.Cgroup}, {"mounted", ph.Mounted}} {
			if g.glob == "" {
				continue
			}
			n++
			if _, err := path.Match(g.glob, "/"); err != nil || !path.IsAbs(g.glob) {
				return fmt.Errorf("%w: phase %q: %s %q is not an absolute path.Match glob", ErrPlan, ph.Name, g.kind, g.glob)
			}
		}
		if n > 1 {
			return fmt.Errorf("%w: phase %q gives %d kinds of evidence; one each", ErrPlan, ph.Name, n)
		}
	}
	if p.WatchPhase != "" && !seen[p.WatchPhase] {
		return fmt.Errorf("%w: watch phase %q is not a phase of the plan", ErrPlan, p.WatchPhase)
	}
	return nil
}

// phaseState is what the scanner knows of the plan's phases.
type phaseState struct {
	defs  []Phase
	role  []int       // the role index a phase's evidence names; -1: none
	at    []time.Time // zero until entered
	why   []string
	order []int // phase indexes in the order they were entered
	// premounted holds, per Mounted phase, the mount points matching its
	// glob at the first tick: they were there before the watch began.
	premounted []map[string]bool
}

// newPhaseState resolves each phase's role once; checkPhases has made sure
// every role named exists.
func newPhaseState(phases []Phase, roles []Role) phaseState {
	ps := phaseState{defs: phases, role: make([]int, len(phases)), at: make([]time.Time, len(phases)), why: make([]string, len(phases)),
		premounted: make([]map[string]bool, len(phases))}
	for i, d := range phases {
		name := d.Appeared + d.Gone + d.Forked // at most one is set
		ps.role[i] = slices.IndexFunc(roles, func(r Role) bool { return r.Name == name && name != "" })
	}
	return ps
}

// phases enters every phase whose evidence this tick shows. It runs after
// scan, so roles are classified and fresh processes are known.
func (s *scanner) phases(now, start time.Time) {
	ps := &s.ph
	for i, d := range ps.defs {
		if !ps.at[i].IsZero() {
			continue
		}
		r := ps.role[i]
		switch {
		case d.Appeared != "":
			if a := s.freshRole[r]; a != nil {
				s.enter(i, a.At, fmt.Sprintf("%s pid %d (%s) appeared", a.Role, a.PID.PID, a.Comm))
			}
		case d.Gone != "":
			if s.roleSeen[r] && len(s.targets(r)) == 0 {
				s.enter(i, now, "no live process of "+d.Gone+" is left")
			}
		case d.Forked != "":
			for _, p := range s.fresh {
				if parent := s.procs[p.ppid]; p.member && parent != nil && parent.has(r) && s.tick > 1 {
					s.enter(i, now, fmt.Sprintf("%s pid %d forked %s pid %d", d.Forked, parent.id.PID, p.comm, p.id.PID))
					break
				}
			}
		case d.Cgroup != "":
			for _, p := range s.hot {
				// The supervisor's own tools are not the container's
				// tasks: runc moves its CRIU into the container's cgroup,
				// and CRIU's own forks are there with it.
				if !p.member || p.initial || s.byComm[p.comm] != nil || p.listed != s.tick || p.state == 'Z' {
					continue
				}
				if cg, ok := s.cgroupMatch(p.id.PID, d.Cgroup); ok {
					s.enter(i, now, fmt.Sprintf("%s pid %d in cgroup %s", p.comm, p.id.PID, cg))
					break
				}
			}
		case d.Mounted != "":
			mounted := mountsMatching(d.Mounted)
			if ps.premounted[i] == nil {
				ps.premounted[i] = map[string]bool{}
				for _, m := range mounted {
					ps.premounted[i][m] = true
				}
				continue
			}
			for _, m := range mounted {
				if !ps.premounted[i][m] {
					s.enter(i, now, "mount point "+m+" appeared")
					break
				}
			}
		default:
			s.enter(i, start, "the operation started")
		}
	}
}

func (s *scanner) enter(i int, at time.Time, why string) {
	s.ph.at[i], s.ph.why[i] = at, why
	s.ph.order = append(s.ph.order, i)
}

// entered returns when the named phase was entered.
func (s *scanner) entered(name string) (time.Time, bool) {
	for i, d := range s.ph.defs {
		if d.Name == name && !s.ph.at[i].IsZero() {
			return s.ph.at[i], true
		}
	}
	return time.Time{}, false
}

// landing is the phases entered so far, and the latest of them in declared
// order: where a kill now lands.
func (s *scanner) landing() *model.Landing {
	if len(s.ph.defs) == 0 {
		return nil
	}
	l := &model.Landing{Seen: []model.PhaseSeen{}}
	last := -1
	for _, i := range s.ph.order {
		l.Seen = append(l.Seen, model.PhaseSeen{Name: s.ph.defs[i].Name, At: s.ph.at[i], Evidence: s.ph.why[i]})
		last = max(last, i)
	}
	if last >= 0 {
		l.Phase = s.ph.defs[last].Name
	}
	return l
}

// cgroupMatch reports whether a cgroup path of pid matches glob, and which.
func (s *scanner) cgroupMatch(pid int, glob string) (string, bool) {
	b, err := s.readAt(pid, "cgroup")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if ok, _ := path.Match(glob, parts[2]); ok {
			return parts[2], true
		}
	}
	return "", false
}

// mountsMatching returns the paths matching glob that are mount points: on
// another device than their directory. A bind-mounted namespace file is on
// nsfs; the empty file it is bound to, before the bind, is not.
func mountsMatching(glob string) []string {
	paths, _ := filepath.Glob(glob)
	var out []string
	var st, dir unix.Stat_t
	for _, p := range paths {
		if unix.Lstat(p, &st) != nil || unix.Stat(filepath.Dir(p), &dir) != nil {
			continue
		}
		if st.Dev != dir.Dev {
			out = append(out, p)
		}
	}
	return out
}
