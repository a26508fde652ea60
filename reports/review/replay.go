package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/rows"
)

// Difference is one way a stored row disagrees with itself: its window
// definition with its hash, its input with its window, or its recorded
// verdict with the verdict the criteria give today for the same input.
type Difference struct {
	File      string
	Row       int    // 1-based among the file's rows (open and seal markers not counted)
	Line      int    // the row's 1-based line in File; 0 when not known (rows given without their file)
	Window    string // the row's window instance id
	Criterion string // "" when the difference is about the whole row
	Detail    string
}

// String names the difference the way a reviewer looks it up:
// "results/x.jsonl row 7 (W4_30): P1 recorded pass=true, recomputed pass=false",
// with the line added when it is not the row number (a sealed file's
// markers take lines): "results/x.jsonl row 7 at line 8 (W4_30): ...".
func (d Difference) String() string {
	s := fmt.Sprintf("%s row %d (%s): ", d.File, d.Row, d.Window)
	if d.Line != 0 && d.Line != d.Row {
		s = fmt.Sprintf("%s row %d at line %d (%s): ", d.File, d.Row, d.Line, d.Window)
	}
	if d.Criterion != "" {
		s += d.Criterion + " "
	}
	return s + d.Detail
}

// WindowReplay is one line of the per-window replay table.
type WindowReplay struct {
	Window       string
	Rows         int
	Statuses     map[string]int // as recorded
	Agree        bool           // every row of the window re-judged identically
	Unregistered int            // rows recorded as run with an unregistered definition
}

// FileReplay is the replay of one JSONL file.
type FileReplay struct {
	Path    string
	Records []decoded.Record // the window rows, decoded once; open and seal markers are not rows
	N       int              // how many rows were read (Records may have been let go: ReplayFiles)
	ReadErr error            // the file could not be read to its end; Records hold what came before
	Chain   error            // the hash chain is broken (a row or marker edited, removed, inserted or moved)
	Diffs   []Difference
	Windows []WindowReplay // in natural window order
	Last    string         // Hash of the last row: compare with a copy kept elsewhere
	// Seal says whether the file's sessions are sealed (see rows.Marker):
	// rows.Sealed, rows.Legacy (written before sealing: fine, but a cut
	// tail cannot be told), or rows.Unsealed (a session without its seal:
	// the run never finished or the file was cut). Its State is "" for rows
	// replayed without their file (ReplayRows).
	Seal rows.Sealing
}

// OK reports whether the file read to its end, its chain holds, no session
// lacks its seal and every row re-judges exactly as recorded.
func (f FileReplay) OK() bool {
	return f.ReadErr == nil && f.Chain == nil && len(f.Diffs) == 0 && f.Seal.State != rows.Unsealed
}

// ReplayFile reads path and replays every row it holds, checking its chain,
// markers included, and its seals. It needs no root and reads nothing but
// path: the rows carry all the evidence. Each row is judged as it is
// decoded, and only its Record is kept.
func ReplayFile(path string) FileReplay { return replayFile(path, true) }

// replayFile is ReplayFile; without keep, the records are let go once
// judged, and what only a report reads of them (their Parts) is not read.
func replayFile(path string, keep bool) FileReplay {
	read := decoded.Read
	if !keep {
		read = decoded.ReadToJudge
	}
	var ds [][]Difference
	df := read(path, func(i int, rec *decoded.Record, in *criteria.Input) {
		ds = append(ds, judge(rec, in))
	})
	f := replay(df.Path, df.Records, df.Lines, ds, df.Chain)
	f.ReadErr, f.Seal = df.ReadErr, df.Seal
	return f
}

// ReplayFiles replays each path, as many at once as there are CPUs, the
// largest first so that no CPU is left with a large file at the end, and
// returns them in the order given. Without keep, each file's records go
// once it is replayed: a replay of many files holds one file's at a time
// per CPU, and prints only counts and differences.
func ReplayFiles(paths []string, keep bool) []FileReplay {
	out := make([]FileReplay, len(paths))
	order := make([]int, len(paths))
	size := make([]int64, len(paths))
	for i, p := range paths {
		order[i] = i
		if st, err := os.Stat(p); err == nil {
			size[i] = st.Size()
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return size[order[a]] > size[order[b]] })
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, i := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f := replayFile(paths[i], keep)
			if !keep {
				f.Records = nil
			}
			out[i] = f
		}()
	}
	wg.Wait()
	return out
}

// ReplayContents replays a file as read by rows.ReadContents, leaving its
// rows to the caller.
func ReplayContents(c *rows.Contents) FileReplay {
	var ds [][]Difference
	df := decoded.FromContents(c, nil, func(i int, rec *decoded.Record, in *criteria.Input) {
		ds = append(ds, judge(rec, in))
	})
	f := replay(df.Path, df.Records, df.Lines, ds, df.Chain)
	f.Seal = df.Seal
	return f
}

// ReplayRows replays rows read from the file named path, without its
// markers: the rows' chain is checked, the seals are not. A broken chain
// does not stop the re-judging: the differences say what the edit changed.
func ReplayRows(path string, rs []rows.Row) FileReplay {
	recs := make([]decoded.Record, len(rs))
	ds := make([][]Difference, len(rs))
	for i, r := range rs {
		rec, in := decoded.Decode(r)
		recs[i], ds[i] = rec, judge(&rec, in)
	}
	return replay(path, recs, nil, ds, rows.VerifyChain(rs))
}

// replay files the differences ds[i] of each record rs[i] (at lines, if
// known) with the chain's verdict.
func replay(path string, rs []decoded.Record, lines []int, ds [][]Difference, chain error) FileReplay {
	f := FileReplay{Path: path, Records: rs, N: len(rs)}
	if chain != nil {
		var ce *rows.ChainError
		if errors.As(chain, &ce) {
			if ce.Row == 0 {
				chain = fmt.Errorf("%s line %d (%s marker): chain broken: %s", path, ce.Line, ce.ID, ce.Problem)
			} else {
				chain = fmt.Errorf("%s row %d (%s): chain broken: %s", path, ce.Row, ce.ID, ce.Problem)
			}
		}
		f.Chain = chain
	}
	byWindow := map[string]*WindowReplay{}
	for i, r := range rs {
		w := byWindow[r.Window.ID]
		if w == nil {
			w = &WindowReplay{Window: r.Window.ID, Statuses: map[string]int{}, Agree: true}
			byWindow[r.Window.ID] = w
		}
		w.Rows++
		w.Statuses[r.Status]++
		if !r.Registration.Registered {
			w.Unregistered++
		}
		for _, d := range ds[i] {
			d.File, d.Row, d.Window = path, i+1, r.Window.ID
			if i < len(lines) {
				d.Line = lines[i]
			}
			f.Diffs = append(f.Diffs, d)
			w.Agree = false
		}
	}
	for _, w := range byWindow {
		f.Windows = append(f.Windows, *w)
	}
	sort.Slice(f.Windows, func(i, j int) bool { return model.CompareIDs(f.Windows[i].Window, f.Windows[j].Window) < 0 })
	if n := len(rs); n > 0 {
		f.Last = rs[n-1].Hash
	}
	return f
}

// ReplayRow re-judges one row and returns every difference, without File,
// rows.Row or Window set. It checks, in order: the window definition against its
// hash (a definition edited after the run); the input's window and scope
// against the row's (the row must describe what was judged); then the
// status, the reason and each criterion's pass, judged, summary and
// evidence against what criteria.Evaluate gives for the stored input.
func ReplayRow(r rows.Row) []Difference {
	rec, in := decoded.Decode(r)
	return judge(&rec, in)
}

// judge is ReplayRow over a row decoded once: in is its whole input, nil
// when it did not decode strictly.
func judge(r *decoded.Record, in *criteria.Input) []Difference {
	var ds []Difference
	add := func(crit, format string, a ...any) {
		ds = append(ds, Difference{Criterion: crit, Detail: fmt.Sprintf(format, a...)})
	}
	if h := model.HashSource(r.Window.Source); h != r.Window.Hash {
		add("", "window definition hash %s does not match its source (%s): the definition was edited after the run", rows.ShortHash(r.Window.Hash), rows.ShortHash(h))
	}
	if in == nil {
		add("", "input does not decode as the criteria's input: %v", r.InputErr)
		return ds
	}
	if !sameJSON(in.Window, r.Window) {
		add("", "the input's window (hash %s) is not the row's window (hash %s)", rows.ShortHash(in.Window.Hash), rows.ShortHash(r.Window.Hash))
	}
	if !sameJSON(in.Scope, r.Scope) {
		add("", "the input's scope (run %q) is not the row's scope (run %q)", in.Scope.Run, r.Scope.Run)
	}
	recorded := r.Results
	if r.ResultsErr != nil {
		add("", "recorded criteria do not decode: %v", r.ResultsErr)
		recorded = nil
	}
	v := criteria.Evaluate(*in)
	if r.Status != v.Status {
		add("", "status recorded %s, recomputed %s", r.Status, v.Status)
	}
	if r.Reason != v.Reason {
		add("", "reason recorded %q, recomputed %q", r.Reason, v.Reason)
	}
	for _, d := range compareResults(recorded, v.Results) {
		add(d.id, "%s", d.detail)
	}
	return ds
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
