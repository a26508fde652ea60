package upstream

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/snapshots"
)

// count is k of N.
type count struct{ K, N int }

func (c count) slash() string { return fmt.Sprintf("%d/%d", c.K, c.N) }
func (c count) of() string    { return fmt.Sprintf("%d of %d", c.K, c.N) }

// measured is a figure counted over its file.
type measured struct {
	fig *Figure
	// faulted[w][c] and controls[w][c]: window w's runs showing column c
	// over its measured runs.
	faulted, controls [][]count
	hosts             []hostFacts // distinct, in the order first seen
}

// hostFacts are what the form asks of the host, as a row recorded them.
type hostFacts struct {
	Distro, Kernel, Cgroup, Arch, CRIU string
	Cores                              int
	Versions                           []string // the components' versions, in Page.Components order
}

type matcher struct {
	col               *Column
	summary, text     *regexp.Regexp
	needsInput, valid bool
}

func compile(c *Column) (matcher, error) {
	m := matcher{col: c, needsInput: c.Text != ""}
	var err error
	if c.Summary != "" {
		if m.summary, err = regexp.Compile(c.Summary); err != nil {
			return m, fmt.Errorf("column %s: summary: %w", c.Name, err)
		}
	}
	if c.Text != "" {
		if m.text, err = regexp.Compile(c.Text); err != nil {
			return m, fmt.Errorf("column %s: text: %w", c.Name, err)
		}
	}
	return m, nil
}

func (m matcher) shows(results []criteria.Result, whole string) bool {
	if m.text != nil && !m.text.MatchString(whole) {
		return false
	}
	if m.col.Criterion == "" && m.summary == nil {
		return true
	}
	for _, r := range results {
		if m.col.Criterion != "" && r.ID != m.col.Criterion {
			continue
		}
		if m.summary == nil || m.summary.MatchString(r.Summary) {
			return true
		}
	}
	return false
}

// measure counts fig over its file, read with decoded.Read (the one
// reader of rows). A file that is gone, does not read to its end, or
// whose chain or seals do not hold, and a window or driver the file does
// not have, are errors: the page cites what is not there.
func measure(root string, fig *Figure, components []string) (*measured, error) {
	for _, file := range fig.files() {
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			return nil, fmt.Errorf("figure %s: %w", fig.Name, err)
		}
	}
	var ms []matcher
	input := false
	for i := range fig.Columns {
		m, err := compile(&fig.Columns[i])
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", fig.Name, err)
		}
		ms = append(ms, m)
		input = input || m.needsInput
	}
	at := map[string]int{}
	for i, w := range fig.Windows {
		at[w.ID] = i
	}
	out := &measured{fig: fig, faulted: grid(len(fig.Windows), len(ms)), controls: grid(len(fig.Windows), len(ms))}
	seen := make([]int, len(fig.Windows))
	driverSeen := false
	var jsonErr error
	row := func(_ int, rec *decoded.Record, in *criteria.Input) {
		if rec.Window.ID == "" || (fig.Driver != "" && rec.Driver != fig.Driver) {
			return
		}
		driverSeen = true
		wi, ok := at[rec.Window.ID]
		if !ok {
			return
		}
		seen[wi]++
		if rec.Status != model.StatusPass && rec.Status != model.StatusFail {
			return
		}
		out.addHost(rec.Host, components)
		whole := ""
		if input {
			// The row as its criteria were judged: its input (as the
			// strict decode gives it) and its recorded criteria.
			b, err := json.Marshal(struct {
				Input    *criteria.Input   `json:"input"`
				Criteria []criteria.Result `json:"criteria"`
			}{in, rec.Results})
			if err != nil && jsonErr == nil {
				jsonErr = err
			}
			whole = string(b)
		}
		tab := out.faulted
		if rec.Window.Fault.Disarmed {
			tab = out.controls
		}
		for ci, m := range ms {
			tab[wi][ci].N++
			if m.shows(rec.Results, whole) {
				tab[wi][ci].K++
			}
		}
	}
	for _, file := range fig.files() {
		f := decoded.Read(filepath.Join(root, file), row)
		switch {
		case f.ReadErr != nil:
			return nil, fmt.Errorf("figure %s: %s does not read to its end: %v", fig.Name, file, f.ReadErr)
		case f.Chain != nil:
			return nil, fmt.Errorf("figure %s: %s: chain broken: %v", fig.Name, file, f.Chain)
		}
	}
	switch {
	case jsonErr != nil:
		return nil, fmt.Errorf("figure %s: %v", fig.Name, jsonErr)
	case fig.Driver != "" && !driverSeen:
		return nil, fmt.Errorf("figure %s: %s has no row of driver %s", fig.Name, strings.Join(fig.files(), ", "), fig.Driver)
	}
	for i, n := range seen {
		if n == 0 {
			return nil, fmt.Errorf("figure %s: %s has no row of window %s", fig.Name, strings.Join(fig.files(), ", "), fig.Windows[i].ID)
		}
	}
	return out, nil
}

func grid(w, c int) [][]count {
	g := make([][]count, w)
	for i := range g {
		g[i] = make([]count, c)
	}
	return g
}

func (m *measured) addHost(h snapshots.Host, components []string) {
	cg := h.CgroupVersion
	if cg == "hybrid" {
		cg = "v1 (hybrid: v1 controllers and /sys/fs/cgroup/unified)"
	}
	f := hostFacts{Distro: h.Distro, Kernel: h.Kernel, Cgroup: cg, Arch: h.Arch, CRIU: h.CRIUVersion, Cores: h.Cores}
	for _, c := range components {
		v, ok := h.Versions[c]
		if !ok {
			v = "not recorded"
		}
		f.Versions = append(f.Versions, v)
	}
	if !slices.ContainsFunc(m.hosts, func(o hostFacts) bool { return sameHost(o, f) }) {
		m.hosts = append(m.hosts, f)
	}
}

func sameHost(a, b hostFacts) bool {
	return a.Distro == b.Distro && a.Kernel == b.Kernel && a.Cgroup == b.Cgroup && a.Arch == b.Arch &&
		a.CRIU == b.CRIU && a.Cores == b.Cores && slices.Equal(a.Versions, b.Versions)
}

// total sums a column over the windows.
func total(tab [][]count, c int) count {
	var t count
	for _, row := range tab {
		t.K += row[c].K
		t.N += row[c].N
	}
	return t
}

// transcript is a transcript read: its command, the host line make repro
// wrote, the script's lines before its first run, its first run, and its
// "reproduced k/N" line.
type transcript struct {
	t              *Transcript
	command, host  string
	header         []string
	inVersions     []bool // header[i] is a line of the versions block
	firstRun, last string
	// A script run once per run (make repro marks each "run <i>: exit
	// <status>"): when its first run did not reproduce, the output and
	// run line of the first that did (exit 0).
	shown      []string
	shownRun   string
	reproduced count
	versions   []string
	runs       int
}

var (
	reproducedLine = regexp.MustCompile(`^reproduced (\d+)/(\d+)\b`)
	runLine        = regexp.MustCompile(`^run \d+: `)
	exitZero       = regexp.MustCompile(`^run \d+: exit 0$`)
)

func readTranscript(root string, t *Transcript) (*transcript, error) {
	b, err := os.ReadFile(filepath.Join(root, t.Path))
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", t.Name, err)
	}
	out := &transcript{t: t}
	inVersions := false
	found := false
	var block []string // the lines since the last run line
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "$ ") && out.command == "":
			out.command = l
			continue
		case strings.HasPrefix(l, "# host: "):
			out.host = strings.TrimPrefix(l, "# host: ")
			continue
		case strings.HasPrefix(l, "#"):
			continue // make repro's own notes: when, at which commit, the exit status
		}
		if m := reproducedLine.FindStringSubmatch(l); m != nil {
			k, _ := strconv.Atoi(m[1])
			n, _ := strconv.Atoi(m[2])
			out.reproduced, out.last, found = count{k, n}, l, true
			continue
		}
		if runLine.MatchString(l) {
			out.runs++
			switch {
			case out.firstRun == "":
				out.firstRun = l
			case out.shownRun == "" && !exitZero.MatchString(out.firstRun) && exitZero.MatchString(l):
				out.shown, out.shownRun = block, l
			}
			block = nil
			continue
		}
		if out.firstRun != "" {
			block = append(block, l)
			continue
		}
		if t.Versions != "" {
			switch {
			case strings.HasPrefix(l, t.Versions):
				inVersions = true
				out.versions = append(out.versions, l)
			case inVersions && strings.HasPrefix(l, " "):
				out.versions = append(out.versions, strings.TrimPrefix(l, "  "))
			default:
				inVersions = false
			}
		}
		out.header = append(out.header, l)
		out.inVersions = append(out.inVersions, inVersions)
	}
	switch {
	case out.command == "":
		return nil, fmt.Errorf("transcript %s: %s has no command line", t.Name, t.Path)
	case !found:
		return nil, fmt.Errorf("transcript %s: %s has no \"reproduced k/N\" line", t.Name, t.Path)
	case t.Versions != "" && len(out.versions) == 0:
		return nil, fmt.Errorf("transcript %s: %s prints no %q line", t.Name, t.Path, t.Versions)
	}
	return out, nil
}
