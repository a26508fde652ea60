// Package findings groups the failed criteria of recorded rows into
// distinct findings about a supervisor: one bug is seen in many windows
// (podman's "already exists" loss in a dozen restore windows), and a
// maintainer wants it once, with where it was seen, how often, and the
// rows that show it. It is pure: it reads rows, never the host.
package findings

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
)

// Signature is what makes two failures one finding: the supervisor, the
// criterion that was false, the class of its evidence (a kind of leftover,
// a supervisor's message with its ids and numbers taken out, a kind of
// damage), the phase the kill landed in and the roles it killed.
type Signature struct {
	Supervisor string `json:"supervisor"`
	Criterion  string `json:"criterion"`
	Evidence   string `json:"evidence"`
	Phase      string `json:"phase,omitempty"`
	Killed     string `json:"killed"`
}

// ID is the signature's stable name: the same signature in a later soak
// is the same finding.
func (s Signature) ID() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{s.Supervisor, s.Criterion, s.Evidence, s.Phase, s.Killed}, "\x00")))
	return "F" + hex.EncodeToString(sum[:])[:8]
}

// Finding is one signature over the rows given.
type Finding struct {
	ID string `json:"id"`
	Signature
	Windows []string `json:"windows"`
	// Seen rows showed it; Measured rows (PASS or FAIL) of its windows
	// could have: k/N.
	Seen     int `json:"seen"`
	Measured int `json:"measured"`
	// First and Last are the commits of the earliest and latest rows
	// that showed it, by the time each ran.
	First   Seen     `json:"first"`
	Last    Seen     `json:"last"`
	Example string   `json:"example"` // the first row's evidence, as recorded
	Rows    []string `json:"rows"`    // the hashes of the rows that show it
	// ControlSeen of ControlMeasured control rows of its windows (the
	// windows disarmed) failed the same criterion with the same class of
	// evidence: what the supervisor does with no fault.
	ControlSeen     int `json:"control_seen"`
	ControlMeasured int `json:"control_measured"`
	// Workarounds are the expert steps that brought the workload back
	// where U1 graded it stuck: a bug report's workaround line.
	Workarounds []string `json:"workarounds,omitempty"`
	// Versions are the components' versions its rows record
	// ("runc: runc version 1.1.5+ds1").
	Versions []string `json:"versions,omitempty"`
}

// Seen is one row's commit and when it ran.
type Seen struct {
	Commit string    `json:"commit"`
	At     time.Time `json:"at"`
}

// Group returns the findings of rs, the most often seen first (then by
// supervisor, criterion and id). A row that did not FAIL shows none; it
// counts in Measured when it PASSed.
func Group(rs []decoded.Record) []Finding {
	by := map[string]*Finding{}
	measured := map[string]int{}
	type ctrlKey struct{ window, criterion, class string }
	ctrlMeasured, ctrlSeen := map[string]int{}, map[ctrlKey]int{}
	for _, r := range rs {
		if r.Window.ID == "" {
			continue // a seal
		}
		if r.Window.Fault.Disarmed {
			// A control shows no finding of its own: it is the baseline
			// its window's findings are weighed against.
			if r.Status == model.StatusPass || r.Status == model.StatusFail {
				ctrlMeasured[r.Window.ID]++
			}
			for _, res := range failed(r) {
				ctrlSeen[ctrlKey{r.Window.ID, res.ID, Class(res)}]++
			}
			continue
		}
		if r.Status == model.StatusPass || r.Status == model.StatusFail {
			measured[r.Window.ID]++
		}
		phase, killed := where(r)
		for _, res := range failed(r) {
			sig := Signature{Supervisor: r.Driver, Criterion: res.ID, Evidence: Class(res), Phase: phase, Killed: killed}
			id := sig.ID()
			f := by[id]
			if f == nil {
				f = &Finding{ID: id, Signature: sig, Example: res.Example()}
				by[id] = f
			}
			f.Seen++
			f.Rows = append(f.Rows, r.Hash)
			if w := res.Workaround; w != "" && !slices.Contains(f.Workarounds, w) {
				f.Workarounds = append(f.Workarounds, w)
			}
			for name, v := range r.Host.Versions {
				if nv := name + ": " + v; !slices.Contains(f.Versions, nv) {
					f.Versions = append(f.Versions, nv)
				}
			}
			if !slices.Contains(f.Windows, r.Window.ID) {
				f.Windows = append(f.Windows, r.Window.ID)
			}
			at := Seen{Commit: r.Run.Commit, At: r.Run.Started}
			if f.First.At.IsZero() || at.At.Before(f.First.At) {
				f.First = at
			}
			if at.At.After(f.Last.At) {
				f.Last = at
			}
		}
	}
	out := make([]Finding, 0, len(by))
	for _, f := range by {
		slices.SortFunc(f.Windows, model.CompareIDs)
		for _, w := range f.Windows {
			f.Measured += measured[w]
			f.ControlMeasured += ctrlMeasured[w]
			f.ControlSeen += ctrlSeen[ctrlKey{w, f.Criterion, f.Evidence}]
		}
		slices.Sort(f.Versions)
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		if a.Seen != b.Seen {
			return b.Seen - a.Seen
		}
		return strings.Compare(a.Supervisor+a.Criterion+a.ID, b.Supervisor+b.Criterion+b.ID)
	})
	return out
}

// failed are the criteria false in a FAIL row.
func failed(r decoded.Record) []criteria.Result {
	if r.Status != model.StatusFail {
		return nil
	}
	// A copy: the decoded criteria are shared with the row's other readers.
	return slices.DeleteFunc(slices.Clone(r.Results), func(res criteria.Result) bool { return !res.Judged || res.Pass })
}

// where reads the phase the kill landed in (for a point compiled into
// the supervisor, the point) and the roles it killed.
func where(r decoded.Record) (phase, killed string) {
	var death model.Death
	if r.Parts != nil {
		death = r.Parts.Death
	}
	if l := death.Landing; l != nil {
		phase = l.Phase
	} else {
		// A compiled-in point lands at itself: the supervisor's own
		// trace says so.
		phase = r.Window.Fault.Point
	}
	var roles []string
	for _, v := range death.Victims {
		if !slices.Contains(roles, v.Role) {
			roles = append(roles, v.Role)
		}
	}
	if len(roles) == 0 {
		roles = []string{"supervisor"}
	}
	return phase, strings.Join(roles, "+")
}

// Class is the class of a false result's evidence: for a supervisor that
// answered with a message (U1's "the supervisor said: ..."), the message;
// otherwise the first line of evidence; with what differs from run to
// run taken out (ids, numbers, run names, cgroup hierarchies, the
// snapshots a leftover was seen in), so one bug seen twice is one class.
func Class(res criteria.Result) string {
	line := res.Example()
	if _, said, ok := strings.Cut(line, "the supervisor said: "); ok {
		line = "said: " + said
	}
	return Normalise(line)
}

var (
	snapshotsSeen = regexp.MustCompile(` \(in [a-z_0-9, ]+\)$`)
	uuid          = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	hexID         = regexp.MustCompile(`\b[0-9a-f]{12,}\b`)
	runName       = regexp.MustCompile(`\br[0-9a-f]{8,}\b`)
	hierarchy     = regexp.MustCompile(`/sys/fs/cgroup/[a-z_,]+/`)
	// a message's own time stamp (runc's and podman's logrus lines): the
	// number rule would keep the digits glued to its T and Z, and one
	// message seen at two seconds would be two classes
	timestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)
	number    = regexp.MustCompile(`\b\d+(\.\d+)?\b`)
	// a random name's digits after its stem (containerd's
	// /tmp/ctd-checkpoint1631021649): the stem is the class
	suffixDigits = regexp.MustCompile(`([A-Za-z_-])\d{6,}\b`)
	spaces       = regexp.MustCompile(`\s+`)
)

// Normalise takes out of an evidence line what differs between two runs
// of one bug.
func Normalise(s string) string {
	if v, ok := normalised.Load(s); ok {
		return v.(string)
	}
	v := normalise(s)
	normalised.Store(s, v)
	return v
}

// normalised keeps each line's class: a report asks for the class of one
// result from several of its tables, and regular expressions are slow.
var normalised sync.Map

func normalise(s string) string {
	s = strings.TrimSpace(s)
	// Each expression is tried only where it can match: the bytes each
	// one needs are looked for first.
	if strings.HasSuffix(s, ")") {
		s = snapshotsSeen.ReplaceAllString(s, "")
	}
	if strings.Count(s, "-") >= 4 {
		s = uuid.ReplaceAllString(s, "<id>")
	}
	if strings.Count(s, ":") >= 2 {
		s = timestamp.ReplaceAllString(s, "<time>")
	}
	s = hexID.ReplaceAllString(s, "<id>")
	s = runName.ReplaceAllString(s, "<run>")
	if strings.Contains(s, "/sys/fs/cgroup/") {
		s = hierarchy.ReplaceAllString(s, "/sys/fs/cgroup/*/")
	}
	s = number.ReplaceAllString(s, "N")
	s = suffixDigits.ReplaceAllString(s, "${1}N")
	return spaces.ReplaceAllString(s, " ")
}

// Across is one class of evidence of one criterion of a supervisor over
// every landing and role killed: the same leftover seen wherever the kill
// landed (podman's libpod cgroups) is one line for a maintainer, its
// findings the detail.
type Across struct {
	Supervisor, Criterion, Evidence string
	Findings                        []string // ids, the most often seen first
	Phases                          []string // where the kills landed, in first-seen order
	Windows                         []string
	Seen                            int
}

// AcrossPhases rolls fs (as Group returns them) up by supervisor,
// criterion and evidence class, the most often seen first.
func AcrossPhases(fs []Finding) []Across {
	at := map[string]int{}
	var out []Across
	for _, f := range fs {
		k := f.Supervisor + "\x00" + f.Criterion + "\x00" + f.Evidence
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Across{Supervisor: f.Supervisor, Criterion: f.Criterion, Evidence: f.Evidence})
		}
		a := &out[i]
		a.Findings = append(a.Findings, f.ID)
		a.Seen += f.Seen
		if f.Phase != "" && !slices.Contains(a.Phases, f.Phase) {
			a.Phases = append(a.Phases, f.Phase)
		}
		for _, w := range f.Windows {
			if !slices.Contains(a.Windows, w) {
				a.Windows = append(a.Windows, w)
			}
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Windows, model.CompareIDs)
	}
	slices.SortStableFunc(out, func(a, b Across) int { return b.Seen - a.Seen })
	return out
}
