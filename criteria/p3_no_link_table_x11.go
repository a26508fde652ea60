package criteria

import (
	"path"
	"strconv"
	"strings"

	"faultwin/model"
	"faultwin/snapshots"
)

// p3 holds when, after both sweeps, no link carries the link prefix, neither
// the run's nft table (in any family) nor a CRIU-* table nor a cgroup of the
// run (<hierarchy>/faultwin/<run>/...) exists, and no X11
// socket, lock or symlink of the run's displays or pointing into its state
// dir is left. Links and tables are host-global: a left veth made every
// later restore fail with "File exists".
func p3(c *ctx) Result {
	j := &judge{id: model.P3}
	j.gap(snapshotGaps(c.afterSweeps()...)...)
	j.gap(scopeGaps(c.in.Scope, needStateDir)...)
	if c.sc.LinkPrefix == "" {
		j.gap("no link prefix in scope or roots")
	}
	if c.sc.Table == "" {
		j.note("scope names no nft table; only CRIU-* tables checked")
	}
	found, gaps := collect(c.afterSweeps(), c.runNet)
	j.gap(gaps...)
	cgroups := false
	for _, f := range found {
		j.fail(f.lineIn())
		cgroups = cgroups || strings.HasPrefix(f.key, "cgroup ")
	}
	// The wording names cgroups only when one is left, so rows judged
	// before cgroups were judged read back the same.
	one, many := "link, table or X11 file", "links, tables or X11 files"
	if cgroups {
		one, many = "link, table, cgroup or X11 file", "links, tables, cgroups or X11 files"
	}
	return j.result("no link, nft table or X11 file of the run after the sweeps",
		func(n int) string { return plural(n, one, many) + " left after the sweeps" })
}

// runNet finds the run's links, nft tables and X11 files in s.
func (c *ctx) runNet(s snapshots.Snapshot) ([]finding, []string) {
	var found []finding
	if c.sc.LinkPrefix != "" {
		for _, l := range s.Links {
			if strings.HasPrefix(l.Name, c.sc.LinkPrefix) {
				found = append(found, finding{key: "link " + l.Name, line: linkLine(l)})
			}
		}
	}
	for _, t := range s.Tables {
		if (c.sc.Table != "" && t.Name == c.sc.Table) || strings.HasPrefix(t.Name, model.CRIUTablePrefix) {
			found = append(found, finding{key: tableLine(t), line: tableLine(t)})
		}
	}
	for _, cg := range s.Cgroups {
		if run, ok := model.RunOfCgroup(cg); ok && run == c.sc.Run {
			found = append(found, finding{key: "cgroup " + cleanPath(cg), line: "cgroup " + cg + " of the run"})
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
