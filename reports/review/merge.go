package review

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/rows"
)

// A sharded soak (`faultwin soak --shard k/n`) leaves one rows file per
// shard, each shard's session opened by a marker carrying its rows.ShardMark.
// MergeShards reads those files back and checks that together they are the
// soak they claim to be: every file verifies and is sealed, every row
// re-judges as recorded, every shard ran the same plan (passes, windows,
// rule), every row is the pair the rule gives its position, the shards
// cover each (window, pass) pair exactly once, and every row has the same
// harness provenance (one commit, clean tree, one definition per window).

// ShardSession is one shard session of a file: its marker and its rows,
// each with the pair it stands for.
type ShardSession struct {
	Path string
	Line int // the open marker's line
	Mark rows.ShardMark
	Rows []rows.Row
	// Records[i] is Rows[i] as its file's replay decoded it.
	Records []decoded.Record
	Lines   []int  // Lines[i] is the line of Rows[i]
	Pairs   []Pair // Pairs[i] is Rows[i]'s pair; only rows that fit the plan
	// Expected is how many pairs the rule gives the shard.
	Expected int
	// Seal: "closed", "unfinished" or "" (unsealed); Note is the seal's note.
	Seal, Note string
}

// Shard is the session's shard.
func (s ShardSession) Shard() Shard { return Shard{s.Mark.K, s.Mark.N} }

// MergedRow is one pair of the merged soak and the row that measured it.
type MergedRow struct {
	Pair
	Shard int
	Path  string
	Line  int
	Row   rows.Row
	// Record is Row decoded once, by its file's replay.
	Record decoded.Record
}

// Merge is the result of MergeShards.
type Merge struct {
	Paths    []string
	Files    []FileReplay // each file's replay: read error, chain, seals, re-judgement
	Sessions []ShardSession
	// Plan is the soak every shard must agree on (K is 0): the first shard
	// session's. Nil when no file holds a shard session.
	Plan *rows.ShardMark
	// Rows is the merged soak in pass-major order: each covered pair once
	// (a duplicated pair by its first row read).
	Rows []MergedRow
	// Missing are the plan's pairs no shard measured; Duplicates the pairs
	// more than one row claims, with where each is ("FILE line N").
	Missing    []Pair
	Duplicates map[Pair][]string
	// Problems are what makes the merge not the soak it claims to be:
	// unreadable or broken files, unsealed sessions, rows that do not
	// re-judge, a shard of another plan, rows off the plan, missing or
	// duplicate pairs. Each is one line naming the file.
	Problems []string
	// Mixed are the provenance differences: rows of more than one commit,
	// rows of a dirty tree, a window with more than one definition.
	Mixed []string
	// Notes are facts worth a reader's eye that are not problems by
	// themselves (a session sealed as unfinished: its missing pairs are
	// problems already).
	Notes []string
}

// MergeShards reads every path and merges the shard sessions they hold.
func MergeShards(paths []string) *Merge {
	m := &Merge{Paths: paths, Duplicates: map[Pair][]string{}}
	for _, p := range paths {
		c, err := rows.ReadContents(p)
		f := ReplayContents(c)
		f.ReadErr = err
		m.Files = append(m.Files, f)
		m.file(c, f)
	}
	m.cover()
	m.provenance()
	return m
}

func (m *Merge) problem(format string, a ...any) {
	m.Problems = append(m.Problems, fmt.Sprintf(format, a...))
}

// file checks one file and collects its shard sessions.
func (m *Merge) file(c *rows.Contents, f FileReplay) {
	p := c.Path
	if f.ReadErr != nil {
		m.problem("%s: does not read to its end: %v", p, f.ReadErr)
	}
	if f.Chain != nil {
		if msg := f.Chain.Error(); strings.Contains(msg, p) {
			m.problem("%s", msg)
		} else {
			m.problem("%s: %s", p, msg)
		}
	}
	for _, d := range f.Diffs {
		m.problem("does not re-judge as recorded: %s", d)
	}
	m.Problems = append(m.Problems, SealProblems(p, f.Seal)...)
	m.Notes = append(m.Notes, SealNotes(p, f.Seal)...)
	if f.Seal.State == rows.Legacy {
		m.problem("%s: %d rows without any session marker (written before sealing): not a shard of a soak, not merged", p, len(c.Rows))
		return
	}
	if f.Seal.LegacyRows > 0 {
		m.problem("%s: %d legacy rows before its first session: not a shard of a soak, not merged", p, f.Seal.LegacyRows)
	}
	if len(c.Rows) == 0 && len(c.Markers) == 0 && f.ReadErr == nil {
		m.problem("%s: empty file", p)
	}
	// A session's rows are the rows between its open marker and the next
	// marker (its seal, or another open marker if it was never sealed).
	after := func(line int) int {
		return sort.Search(len(c.RowLines), func(r int) bool { return c.RowLines[r] > line })
	}
	for i := range c.Markers {
		mk := &c.Markers[i]
		if mk.Open == nil {
			continue
		}
		start, end := after(mk.Line), len(c.Rows)
		if i+1 < len(c.Markers) {
			end = after(c.Markers[i+1].Line)
		}
		s := ShardSession{Path: p, Line: mk.Line, Rows: c.Rows[start:end], Records: f.Records[start:end], Lines: c.RowLines[start:end]}
		if i+1 < len(c.Markers) && c.Markers[i+1].Seal != nil {
			s.Seal, s.Note = c.Markers[i+1].Seal.End, c.Markers[i+1].Seal.Note
		}
		if mk.Open.Shard == nil {
			if len(s.Rows) > 0 {
				m.problem("%s line %d: a session of %s with no shard facts in its open marker (not written by `faultwin soak --shard`): not merged", p, mk.Line, count(len(s.Rows), "row"))
			}
			continue
		}
		s.Mark = *mk.Open.Shard
		m.session(s)
	}
}

// session checks one shard session against the plan and numbers its rows.
func (m *Merge) session(s ShardSession) {
	pairs, err := MarkPairs(&s.Mark)
	if err != nil {
		m.problem("%s line %d: %v: not merged", s.Path, s.Line, err)
		return
	}
	if m.Plan == nil {
		plan := s.Mark
		plan.K = 0
		plan.Windows = slices.Clone(plan.Windows)
		m.Plan = &plan
	} else if d := planDiff(*m.Plan, s.Mark); d != "" {
		first := m.Sessions[0]
		m.problem("%s line %d (shard %s): %s than %s line %d (shard %s): a shard of another soak, not merged",
			s.Path, s.Line, s.Shard(), d, first.Path, first.Line, first.Shard())
		return
	}
	s.Expected = len(pairs)
	for i, r := range s.Rows {
		if i >= len(pairs) {
			m.problem("%s line %d (shard %s): %s beyond the shard's %s: not merged", s.Path, s.Lines[i], s.Shard(),
				count(len(s.Rows)-len(pairs), "row"), count(len(pairs), "pair"))
			s.Rows, s.Records, s.Lines = s.Rows[:i], s.Records[:i], s.Lines[:i]
			break
		}
		if r.Window.ID != pairs[i].Window {
			m.problem("%s line %d (shard %s): row %d of the shard is %s, the rule gives it %s: this row and the shard's rows after it are not merged",
				s.Path, s.Lines[i], s.Shard(), i+1, r.Window.ID, pairs[i])
			s.Rows, s.Records, s.Lines = s.Rows[:i], s.Records[:i], s.Lines[:i]
			break
		}
	}
	s.Pairs = pairs[:len(s.Rows)]
	m.Sessions = append(m.Sessions, s)
}

// planDiff says how shard mark b's soak differs from plan a, "" if not.
func planDiff(a, b rows.ShardMark) string {
	var d []string
	if a.N != b.N {
		d = append(d, fmt.Sprintf("%d shards, not %d", b.N, a.N))
	}
	if a.Passes != b.Passes {
		d = append(d, fmt.Sprintf("%d passes, not %d", b.Passes, a.Passes))
	}
	if !slices.Equal(a.Windows, b.Windows) {
		d = append(d, fmt.Sprintf("windows [%s], not [%s]", strings.Join(b.Windows, " "), strings.Join(a.Windows, " ")))
	}
	if len(d) == 0 {
		return ""
	}
	return "another plan: " + strings.Join(d, ", ")
}

// cover merges the sessions' rows in pass-major order and names every
// pair missing or measured more than once.
func (m *Merge) cover() {
	if m.Plan == nil {
		m.problem("no shard session in %s: nothing to merge (write shards with `faultwin soak --shard k/n`)", count(len(m.Paths), "file"))
		return
	}
	all := AllPairs(m.Plan.Windows, m.Plan.Passes)
	index := make(map[Pair]int, len(all))
	for i, p := range all {
		index[p] = i
	}
	got := make([]*MergedRow, len(all))
	seen := map[int]bool{}
	for _, s := range m.Sessions {
		seen[s.Mark.K] = true
		for i, p := range s.Pairs {
			at := fmt.Sprintf("%s line %d (shard %s)", s.Path, s.Lines[i], s.Shard())
			j := index[p]
			if got[j] != nil {
				if len(m.Duplicates[p]) == 0 {
					m.Duplicates[p] = []string{fmt.Sprintf("%s line %d (shard %d/%d)", got[j].Path, got[j].Line, got[j].Shard, m.Plan.N)}
				}
				m.Duplicates[p] = append(m.Duplicates[p], at)
				continue
			}
			got[j] = &MergedRow{Pair: p, Shard: s.Mark.K, Path: s.Path, Line: s.Lines[i], Row: s.Rows[i], Record: s.Records[i]}
		}
	}
	for k := 1; k <= m.Plan.N; k++ {
		if !seen[k] {
			m.problem("shard %d/%d: no session of it in any file", k, m.Plan.N)
		}
	}
	for j, g := range got {
		if g == nil {
			m.Missing = append(m.Missing, all[j])
			continue
		}
		m.Rows = append(m.Rows, *g)
	}
	if n := len(m.Missing); n > 0 {
		var names []string
		for _, p := range m.Missing {
			names = append(names, fmt.Sprintf("%s (shard %d/%d)", p, ShardOf(index[p], m.Plan.N), m.Plan.N))
		}
		m.problem("coverage: %s of %d missing: %s", count(n, "pair"), len(all), strings.Join(names, ", "))
	}
	dups := make([]Pair, 0, len(m.Duplicates))
	for p := range m.Duplicates {
		dups = append(dups, p)
	}
	sort.Slice(dups, func(a, b int) bool { return index[dups[a]] < index[dups[b]] })
	for _, p := range dups {
		m.problem("coverage: %s measured %d times: %s (the first is merged)", p, len(m.Duplicates[p]), strings.Join(m.Duplicates[p], ", "))
	}
}

// provenance names every way the rows' harness provenance differs: more
// than one commit, a dirty tree, more than one definition of a window.
func (m *Merge) provenance() {
	type where struct {
		path  string
		shard string
	}
	commits := map[string]map[where]int{}
	dirty := map[where]int{}
	total := map[where]int{}
	defs := map[string]map[string][]string{} // window -> definition hash -> where
	var order []where
	for _, s := range m.Sessions {
		w := where{s.Path, s.Shard().String()}
		if _, ok := total[w]; !ok {
			order = append(order, w)
		}
		for _, r := range s.Rows {
			total[w]++
			if commits[r.Run.Commit] == nil {
				commits[r.Run.Commit] = map[where]int{}
			}
			commits[r.Run.Commit][w]++
			if r.Run.Dirty {
				dirty[w]++
			}
			if defs[r.Window.ID] == nil {
				defs[r.Window.ID] = map[string][]string{}
			}
			at := fmt.Sprintf("%s (shard %s)", w.path, w.shard)
			if l := defs[r.Window.ID][r.Window.Hash]; len(l) == 0 || l[len(l)-1] != at {
				defs[r.Window.ID][r.Window.Hash] = append(l, at)
			}
		}
	}
	if len(commits) > 1 {
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(commits)) {
			var in []string
			for _, w := range order {
				if n := commits[c][w]; n > 0 {
					in = append(in, fmt.Sprintf("%s (shard %s): %s", w.path, w.shard, count(n, "row")))
				}
			}
			parts = append(parts, fmt.Sprintf("%s in %s", shortCommit(c), strings.Join(in, ", ")))
		}
		m.Mixed = append(m.Mixed, fmt.Sprintf("provenance: rows of %d commits: %s", len(commits), strings.Join(parts, "; ")))
	}
	for _, w := range order {
		if n := dirty[w]; n > 0 {
			m.Mixed = append(m.Mixed, fmt.Sprintf("provenance: %s (shard %s): %d of %s run from a dirty work tree", w.path, w.shard, n, count(total[w], "row")))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(defs)) {
		if len(defs[id]) < 2 {
			continue
		}
		var parts []string
		for _, h := range slices.Sorted(maps.Keys(defs[id])) {
			parts = append(parts, fmt.Sprintf("%s in %s", rows.ShortHash(h), strings.Join(defs[id][h], ", ")))
		}
		m.Mixed = append(m.Mixed, fmt.Sprintf("provenance: window %s has %d definitions: %s", id, len(defs[id]), strings.Join(parts, "; ")))
	}
}

func shortCommit(c string) string {
	if c == "" {
		return `""`
	}
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// Commits returns the distinct run commits of the merged rows, sorted, and
// whether any merged row was run from a dirty tree.
func (m *Merge) Commits() (commits []string, dirty bool) {
	set := map[string]bool{}
	for _, r := range m.Rows {
		set[r.Row.Run.Commit] = true
		dirty = dirty || r.Row.Run.Dirty
	}
	return slices.Sorted(maps.Keys(set)), dirty
}

// Summary summarises the merged rows per window, numbered by their pass.
func (m *Merge) Summary() []WindowSummary {
	rs := make([]decoded.Record, len(m.Rows))
	passes := make([]int, len(m.Rows))
	for i, r := range m.Rows {
		rs[i], passes[i] = r.Record, r.Pass
	}
	return SummarizePasses(rs, passes)
}

// ShardFacts is one shard's share of the merged soak and the hosts it ran on.
type ShardFacts struct {
	K, N  int
	Files []string
	Rows  int // merged rows
	// Expected is how many pairs the rule gives the shard.
	Expected int
	Load     Spread // 1-minute load average before each window
	// Kernels, CRIU versions, core counts and memory sizes seen, each
	// distinct value once, in the order met.
	Kernels, CRIU, Cores, Mem []string
	Statuses                  map[string]int
}

// Shards returns each shard's facts, shard 1 first, from the merged rows.
func (m *Merge) Shards() []ShardFacts {
	if m.Plan == nil {
		return nil
	}
	out := make([]ShardFacts, m.Plan.N)
	all := AllPairs(m.Plan.Windows, m.Plan.Passes)
	for k := range out {
		out[k] = ShardFacts{K: k + 1, N: m.Plan.N, Statuses: map[string]int{}}
	}
	for i := range all {
		out[ShardOf(i, m.Plan.N)-1].Expected++
	}
	loads := make([][]float64, m.Plan.N)
	for _, r := range m.Rows {
		f := &out[r.Shard-1]
		f.Rows++
		f.Statuses[r.Row.Status]++
		if !slices.Contains(f.Files, r.Path) {
			f.Files = append(f.Files, r.Path)
		}
		h := r.Row.Host
		f.Kernels = addOnce(f.Kernels, h.Kernel)
		f.CRIU = addOnce(f.CRIU, h.CRIUVersion)
		f.Cores = addOnce(f.Cores, fmt.Sprint(h.Cores))
		f.Mem = addOnce(f.Mem, fmt.Sprintf("%.1f GiB", float64(h.MemBytes)/(1<<30)))
		loads[r.Shard-1] = append(loads[r.Shard-1], h.LoadBefore[0])
	}
	for k := range out {
		out[k].Load = SpreadOf(loads[k])
	}
	return out
}

func addOnce(l []string, v string) []string {
	if v == "" {
		v = "(unknown)"
	}
	if slices.Contains(l, v) {
		return l
	}
	return append(l, v)
}

// SummarizePasses is Summarize with each row's pass given (a shard's rows,
// or a merge's, are not numbered by their file order as Passes does).
func SummarizePasses(rs []decoded.Record, passes []int) []WindowSummary {
	sums := Summarize(rs)
	at := map[string]int{}
	for i, s := range sums {
		at[s.Window] = i
	}
	next := map[string]int{}
	for i, r := range rs {
		if r.Status == model.StatusPass {
			continue
		}
		id := SummaryID(r)
		s := &sums[at[id]]
		s.NotPass[next[id]].Pass = passes[i]
		next[id]++
	}
	return sums
}
