// Package upstream renders a finding as its project's issue: the
// project's own form, in plain words, filled from what the rows and the
// standalone script's transcripts recorded. A finding's page under
// docs/findings/ is a front matter (the hand-written prose and what it
// cites), the issue generated from it, and a hand-written tail the
// renderer keeps as it is. Rendering a page again gives the same bytes
// as long as the page and what it cites agree; a test regenerates every
// page and fails when one does not.
package upstream

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Page is a finding page's front matter: everything on the page that is
// not measured.
type Page struct {
	Finding string `yaml:"finding"` // the page's name: docs/findings/<finding>.md
	Project string `yaml:"project"` // owner/name on GitHub
	// Tracker is where it is filed (the form's address); Route says how
	// and why there, in a line.
	Tracker string `yaml:"tracker"`
	Route   string `yaml:"route"`
	Title   string `yaml:"title"`
	// Components are the host facts' version keys of the tools whose
	// versions the form asks for, in the order shown.
	Components  []string     `yaml:"components"`
	Figures     []Figure     `yaml:"figures"`
	Transcripts []Transcript `yaml:"transcripts"`
	Form        []Field      `yaml:"form"`
	Related     []Related    `yaml:"related"`
	// Lacks are what the form wants and neither the rows nor the
	// transcripts hold: what the next soak must record.
	Lacks []string `yaml:"lacks"`
}

// Figure is one rows file's count of a finding: per window, how many of
// its measured runs (PASS or FAIL) show each column, and the same for its
// controls (the window disarmed).
type Figure struct {
	Name string `yaml:"name"`
	File string `yaml:"file"` // from the repository's root
	// More is further rows files of the same runs (a soak's passes
	// written to files of their own), counted with File as one.
	More   []string `yaml:"more"`
	Driver string   `yaml:"driver"` // only this driver's rows, when set
	Label  string   `yaml:"label"`  // in plain words: what ran
	// Windows name each window counted and say, in plain words, what
	// was killed and when.
	Windows []Window `yaml:"windows"`
	Columns []Column `yaml:"columns"`
}

// files are the rows files a figure counts, File first.
func (f *Figure) files() []string { return append([]string{f.File}, f.More...) }

// Window is a window counted by a figure.
type Window struct {
	ID   string `yaml:"id"`
	What string `yaml:"what"`
}

// Column is what a run shows: a row shows it when one of its recorded
// criteria (Criterion, when set) has a summary matching Summary and the
// row's recorded input and criteria, as JSON, match Text; every pattern
// left empty matches.
type Column struct {
	Name      string `yaml:"name"`
	Label     string `yaml:"label"`
	Criterion string `yaml:"criterion"`
	Summary   string `yaml:"summary"`
	Text      string `yaml:"text"`
}

// Transcript is a standalone script's transcript (make repro writes
// them): its command, its output and its "reproduced k/N" line.
type Transcript struct {
	Name  string `yaml:"name"`
	Path  string `yaml:"path"` // from the repository's root
	Label string `yaml:"label"`
	// Versions is the line the script prints before the tool's own
	// version output ("runc:"): that line and the indented lines after
	// it are the version the form asks for.
	Versions string `yaml:"versions"`
	// SameAs names an earlier transcript run with the same tools: this
	// one's versions block is shown neither in its excerpt nor again
	// under the versions field.
	SameAs string `yaml:"same_as"`
}

// Field is one field of the project's issue form: hand-written text
// (which may name a count as {{figure.column}}, {{figure.column.controls}}
// or {{transcript}}, never as a literal number), then the generated parts
// Gen names, in order, then After.
type Field struct {
	Label string   `yaml:"label"`
	Text  string   `yaml:"text"`
	Gen   []string `yaml:"gen"`
	After string   `yaml:"after"`
}

// Related is a public issue or pull request close to the finding.
type Related struct {
	Ref     string `yaml:"ref"` // "opencontainers/runc#703"
	URL     string `yaml:"url"`
	Differs string `yaml:"differs"` // one line: how it differs
}

const (
	fmDelim = "---\n"
	// handMark starts the hand-written tail; the renderer keeps what
	// follows it byte for byte.
	handMark = "<!-- hand-written below: faultwin findings --upstream keeps it as it is -->\n"
)

// parsed is a page split into its parts.
type parsed struct {
	page  Page
	front string // the front matter's YAML, as written
	tail  string // after handMark
}

func parse(b []byte) (parsed, error) {
	s := string(b)
	if !strings.HasPrefix(s, fmDelim) {
		return parsed{}, fmt.Errorf("no front matter (the page does not start with ---)")
	}
	front, rest, ok := strings.Cut(s[len(fmDelim):], "\n"+fmDelim)
	if !ok {
		return parsed{}, fmt.Errorf("front matter not closed by a --- line")
	}
	front += "\n"
	var p parsed
	p.front = front
	dec := yaml.NewDecoder(bytes.NewReader([]byte(front)))
	dec.KnownFields(true)
	if err := dec.Decode(&p.page); err != nil {
		return parsed{}, fmt.Errorf("front matter: %w", err)
	}
	if _, tail, ok := strings.Cut(rest, handMark); ok {
		p.tail = tail
	}
	return p, nil
}

// HasFrontMatter reports whether a page is one the renderer writes.
func HasFrontMatter(b []byte) bool { return bytes.HasPrefix(b, []byte(fmDelim)) }

// RenderFile renders the page at path (under root's docs/findings) again
// from its front matter, its tail and what it cites under root.
func RenderFile(root, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := Render(root, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return out, nil
}

// PagePath is the page of a finding under root.
func PagePath(root, finding string) string {
	return filepath.Join(root, "docs", "findings", finding+".md")
}

// CitedRows are the rows files a page's figures count, from the
// repository's root; nil when the page does not parse.
func CitedRows(b []byte) []string {
	p, err := parse(b)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range p.page.Figures {
		for _, file := range f.files() {
			if !slices.Contains(out, file) {
				out = append(out, file)
			}
		}
	}
	return out
}
