package criteria

import (
	"path"
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

var _ = register(model.P3, "no link, nft table, cgroup or X11 socket of the run is left", p3)

// p3 holds when, after both sweeps, no link carries the link prefix or a
// name the driver declares (Roots.Links), neither the run's nft table (in
// any family) nor a CRIU-* table nor a declared chain of a host table
// (Roots.Chains) nor a cgroup of the run (<hierarchy>/faultwin/<run>/...)
// exists, and no X11 socket, lock or symlink of the run's displays or
// pointing into its state dir is left. Links, tables and chains are
// host-global: a left veth made every later restore fail with "File
// exists". Findings the supervisor keeps by design (Roots.Shared) are
// noted, never failed.
func p3(c *ctx) Result {
	j := &judge{id: model.P3}
	j.gap(snapshotGaps(c.afterSweeps()...)...)
	j.gap(scopeGaps(c.in.Scope, needStateDir)...)
	if c.sc.LinkPrefix == "" {
		j.gap("no link prefix in scope or roots")
	}
	j.gap(globGaps(c.in.Roots, "links", "chains", "shared")...)
	if c.sc.Table == "" {
		j.note("scope names no nft table; only CRIU-* tables checked")
	}
	found, gaps := collect(c.afterSweeps(), c.runNet)
	j.gap(gaps...)
	own, kept := splitShared(c.in.Roots, found)
	cgroups, chains := false, false
	for _, f := range own {
		j.fail(f.lineIn())
		cgroups = cgroups || strings.HasPrefix(f.key, "cgroup ")
		chains = chains || strings.HasPrefix(f.key, "chain ")
	}
	for _, f := range kept {
		j.note(keptNote(f))
	}
	// The wording names cgroups and chains only when one is left, so rows
	// judged before either was judged read back the same.
	one, many := []string{"link", "table"}, []string{"links", "tables"}
	if chains {
		one, many = append(one, "chain"), append(many, "chains")
	}
	if cgroups {
		one, many = append(one, "cgroup"), append(many, "cgroups")
	}
	return j.result("no link, nft table or X11 file of the run after the sweeps",
		func(n int) string {
			return plural(n, strings.Join(one, ", ")+" or X11 file", strings.Join(many, ", ")+" or X11 files") +
				" left after the sweeps"
		})
}

// runNet finds the run's links, nft tables and chains, cgroups and X11
// files in s, those the supervisor keeps by design included.
func (c *ctx) runNet(s snapshots.Snapshot) ([]finding, []string) {
	var found []finding
	if c.sc.LinkPrefix != "" {
		for _, l := range s.Links {
			if strings.HasPrefix(l.Name, c.sc.LinkPrefix) {
				found = append(found, finding{key: "link " + l.Name, line: linkLine(l)})
			}
		}
	}
	found = append(found, describedLinks(s, c.in.Roots, c.sc.LinkPrefix, c.runClaim(s))...)
	for _, t := range s.Tables {
		if (c.sc.Table != "" && t.Name == c.sc.Table) || strings.HasPrefix(t.Name, model.CRIUTablePrefix) {
			found = append(found, finding{key: tableLine(t), line: tableLine(t)})
		}
	}
	found = append(found, describedChains(s, c.in.Roots, c.runClaim(s))...)
	for _, cg := range s.Cgroups {
		if run, ok := model.RunOfCgroup(cg); ok && run == c.sc.Run {
			found = append(found, finding{key: cgroupKey(cg), line: "cgroup " + cg + " of the run"})
		}
	}
	for _, f := range s.X11 {
		if why := c.x11Why(f); why != "" {
			found = append(found, finding{key: "x11 " + cleanPath(f.Path), line: fileLine("x11", f) + ": " + why})
		}
	}
	return found, nil
}

// x11Why says why an X11 file is the run's, or "".
func (c *ctx) x11Why(f snapshots.File) string {
	if n, ok := x11Display(f.Path); ok {
		for _, d := range c.sc.Displays {
			if d == n {
				return "display :" + strconv.Itoa(n) + " of the run"
			}
		}
	}
	if under(f.Path, c.sc.StateDir) || under(f.Target, c.sc.StateDir) {
		return "under state dir"
	}
	return ""
}

// x11Display parses the display number of an X11 socket (".../X91") or lock
// file (".../.X91-lock").
func x11Display(p string) (int, bool) {
	b := path.Base(p)
	var num string
	switch {
	case strings.HasPrefix(b, ".X") && strings.HasSuffix(b, "-lock"):
		num = b[2 : len(b)-len("-lock")]
	case strings.HasPrefix(b, "X"):
		num = b[1:]
	default:
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || num == "" || num[0] == '+' || num[0] == '-' {
		return 0, false
	}
	return n, true
}
