package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
	"faultwin/windows/definitions"
	"faultwin/windows/runner"
)

// runExplore maps a timed window's whole kill window: it kills the family's
// supervisor at every step of a delay range, classes each instant by what
// the kill left (review.Outcome), then bisects every boundary between two
// classes down to a resolution. Every kill is an ordinary row, named with
// its delay (W3_37), so replay and report work on it unchanged.
const exploreUsage = `usage: faultwin explore --family F [--from MS] [--to MS] [--step MS] [--repeat N] [--resolution MS] [--max-kills N] [--candidate FILE] [--candidate-id ID] [--windows DIR] [--results FILE] [--state-root DIR] [--refsup BIN]

Maps a timed window's whole kill window: kills the family's supervisor at
every step of a delay range (--from, --to, --step), classes each instant
by what the kill left, then bisects every boundary between two classes
until its sides are --resolution ms apart, within --max-kills kills. Every
kill is an ordinary row named with its delay (W3_37), appended to
--results (default out/explore-F.jsonl), so replay and report read them
unchanged. The map (classes and boundaries) is printed at the end;
--candidate writes a registration candidate with one instance per class.

Exit status: 0 when the map was made (also when --max-kills stopped the
bisection), 1 when it stopped on an error (a host that cannot be
measured, a row that cannot be written), 64 a usage error.
`

func runExplore(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "explore", exploreUsage)
	wf := addWindowFlags(fs, "")
	family := fs.String("family", "", "the timed window family to explore, e.g. W3 (required)")
	from := fs.Int("from", 10, "first delay, ms after CRIU starts")
	to := fs.Int("to", 400, "last delay, ms")
	step := fs.Int("step", 10, "grid step, ms")
	repeat := fs.Int("repeat", 1, "kills per instant; an instant's class is the majority's, else mixed")
	resolution := fs.Int("resolution", 2, "bisect each boundary until its two sides are this close, ms")
	maxKills := fs.Int("max-kills", 400, "stop after this many kills, whatever is left to bisect")
	candidate := fs.String("candidate", "", "write a registration candidate (YAML, one instance per class) here")
	candID := fs.String("candidate-id", "", "family id of the candidate (default <family>X)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	switch {
	case *family == "":
		return fs.usagef("--family is required (a timed family such as W3)")
	case *from < definitions.MinDelayMS || *to > definitions.MaxDelayMS || *from > *to:
		return fs.usagef("--from %d --to %d: want %d <= from <= to <= %d", *from, *to, definitions.MinDelayMS, definitions.MaxDelayMS)
	case *step < 1 || *repeat < 1 || *resolution < 1 || *maxKills < 1:
		return fs.usagef("--step, --repeat, --resolution and --max-kills must be at least 1")
	}
	if *wf.out == "" {
		*wf.out = filepath.Join("out", "explore-"+*family+".jsonl")
	}
	ws, err := wf.loadWindows()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ws, func(w model.Window) bool { return w.Family == *family })
	if i < 0 {
		return fs.usagef("--family %s: no registered family of that name in %s", *family, filepath.Join(*wf.dir, "*.yaml"))
	}
	base := ws[i]
	if !base.Timed() {
		return fs.usagef("--family %s arms %s, which is not a timed point: only a delay can be explored", *family, base.Fault.Point)
	}
	var bugs []string
	if *wf.bugs != "" {
		bugs = strings.Split(*wf.bugs, ",")
	}
	s, err := runner.Open(runner.Config{Bin: *wf.bin, StateRoot: *wf.root, Bugs: bugs, LogDir: *wf.logs}, ".", *wf.out, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	x := &explorer{s: s, ws: ws, base: base, repeat: *repeat, max: *maxKills, out: stdout, class: map[int]string{}, t0: time.Now()}
	for d := *from; d <= *to; d += *step {
		if err := x.measure(ctx, d); err != nil {
			return x.finish(err, *candidate, *candID)
		}
	}
	for {
		a, b, ok := x.widestBoundary(*resolution)
		if !ok {
			break
		}
		if err := x.measure(ctx, (a+b)/2); err != nil {
			return x.finish(err, *candidate, *candID)
		}
	}
	return x.finish(nil, *candidate, *candID)
}

type explorer struct {
	s      *runner.Session
	ws     []model.Window // the directory's windows: the family's instances among them
	base   model.Window
	repeat int
	max    int
	out    io.Writer
	rows   []decoded.Record
	class  map[int]string // delay -> class of the instant
	kills  int
	t0     time.Time
}

// errBudget ends an exploration that used its kills.
var errBudget = fmt.Errorf("kill budget spent")

// measure kills the supervisor repeat times at delay d and classes d.
func (x *explorer) measure(ctx context.Context, d int) error {
	if _, done := x.class[d]; done {
		return nil
	}
	w, err := definitions.Instance(x.ws, x.base.Family, d)
	if err != nil {
		return err
	}
	var outs []review.Outcome
	for k := 0; k < x.repeat; k++ {
		if x.kills >= x.max {
			return errBudget
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		o, row, err := x.s.RunAndRecord(ctx, w)
		if err != nil {
			return err
		}
		x.kills++
		rec, _ := decoded.Decode(*row)
		x.rows = append(x.rows, rec)
		if o.Verdict.Status == model.StatusInvalid || o.Verdict.Status == model.StatusError {
			if pre, ok := o.Verdict.Result(model.PRE); (ok && !pre.Holds()) || o.Verdict.Status == model.StatusError {
				return fmt.Errorf("%s: %s %s: the host cannot be measured; clean it (`make sweep`) and explore again", w.ID, o.Verdict.Status, o.Verdict.Reason)
			}
		}
		oc, err := review.OutcomeOf(rec)
		if err != nil {
			return err
		}
		outs = append(outs, oc)
		fmt.Fprintf(x.out, "[%3d] %-8s %-7s %s; %d live, %d mounted  (%s)\n", x.kills, w.ID, row.Status, oc.Class(),
			oc.Alive, oc.Mounted, time.Since(x.t0).Round(time.Second))
	}
	x.class[d] = review.MajorityClass(outs)
	return nil
}

// widestBoundary returns the widest pair of neighbouring measured delays of
// different classes that is still wider than resolution.
func (x *explorer) widestBoundary(resolution int) (int, int, bool) {
	ds := make([]int, 0, len(x.class))
	for d := range x.class {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	best, a, b := 0, 0, 0
	for i := 1; i < len(ds); i++ {
		gap := ds[i] - ds[i-1]
		if x.class[ds[i]] != x.class[ds[i-1]] && gap > resolution && gap > best && (ds[i-1]+ds[i])/2 != ds[i-1] {
			best, a, b = gap, ds[i-1], ds[i]
		}
	}
	return a, b, best > 0
}

// finish prints the map, writes the candidate and returns the explore's
// error (a spent budget is reported, not an error).
func (x *explorer) finish(err error, candidate, candID string) error {
	maps, merrs := review.MapKills(x.rows)
	fmt.Fprintf(x.out, "\nexplore %s: %d kills at %d instants in %s, rows in %s\n", x.base.Family, x.kills, len(x.class),
		time.Since(x.t0).Round(time.Second), x.s.Results)
	for _, m := range maps {
		for _, c := range m.Classes {
			fmt.Fprintf(x.out, "  class  %s\n", c)
		}
		for _, b := range m.Boundaries {
			fmt.Fprintf(x.out, "  boundary %d..%d ms (within %d ms): %s -> %s\n", b.From, b.To, b.ResolvedWithinMS, b.Before, b.After)
		}
		if candidate != "" {
			if candID == "" {
				candID = x.base.Family + "X"
			}
			if werr := os.WriteFile(candidate, []byte(review.Candidate(m, x.base, candID)), 0o644); werr != nil {
				return werr
			}
			fmt.Fprintf(x.out, "registration candidate: %s (review it, then add it to the definitions in %s)\n", candidate, filepath.Dir(x.base.File))
		}
	}
	for _, e := range merrs {
		fmt.Fprintln(x.out, "  unreadable:", e)
	}
	if err == errBudget {
		fmt.Fprintf(x.out, "explore: stopped after %d kills (--max-kills); boundaries may be coarser than asked\n", x.kills)
		return nil
	}
	return err
}
