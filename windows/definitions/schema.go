package definitions

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"faultwin/internal/model"

	"gopkg.in/yaml.v3"
)

// family is one YAML document: a window definition before expansion into
// instances. Values are normalised (sorted delays, criteria in model.CriterionIDs
// order, sorted labels, folded description) so the canonical form depends on
// meaning only.
type family struct {
	ID          string
	Driver      string
	Operation   string
	Point       string
	Delays      []int
	Kill        string
	LandsIn     string
	LandsAt     map[int]string // per delay, for a timed family whose instances land in different phases
	SecondDeath string
	Pre         model.Precondition
	Criteria    []string // the criteria it is judged by: as listed, or its driver's default changed by crit
	Labels      []string
	Description string

	crit   critChanges      // criteria: as the definition wrote them
	spec   model.DriverSpec // the driver's published points and operations
	file   string
	line   int // line of the document's mapping
	idLine int // line of its id
}

// Fields of a definition, in canonical order.
var (
	topFields = []string{"id", "driver", "operation", "point", "delays_ms", "kill", "lands_in", "second_death", "precondition", "criteria", "labels", "description"}
	preFields = []string{"cold", "restored", "checkpoint", "display", "fail_restore", "network_lock"}
	required  = []string{"id", "operation", "point", "precondition", "description"}
)

var (
	idPattern    = regexp.MustCompile(`^[A-Z][A-Z0-9]*$`)
	labelPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
)

// kills are the values of kill; the first is the default.
var kills = []string{model.KillSupervisor, model.KillCRIUFirst, model.KillCRIUHeld}

// fieldLine is the line of a field's value, or def when it is absent.
func fieldLine(fields fieldNodes, name string, def int) int {
	if n := fields[name]; n != nil {
		return n.Line
	}
	return def
}

// windowPoints lists the points of spec that a window may name: those
// passed by one of its operations, sorted.
func windowPoints(spec model.DriverSpec) []string {
	var out []string
	for _, pt := range spec.Points {
		if slices.Contains(spec.Operations, pt.Operation) {
			out = append(out, pt.Name)
		}
	}
	slices.Sort(out)
	return out
}

// maxSessions bounds the precondition counts: more sessions than this is a
// typo, not a window.
const maxSessions = 16

// Size limits of a definition: a definition is read by people and stored in
// every row of every window it defines, so anything past these is a mistake
// (a pasted log, a generated file), not a window.
const (
	MaxFileBytes        = 1 << 20 // a definition file, refused before parsing
	MaxIDChars          = 32      // a family id
	MaxDescriptionBytes = 4096    // a description after whitespace folding
	MaxLabels           = 16      // labels of one definition
	MaxLabelChars       = 40      // one label
)

// fieldNodes maps a field to its value node. A field present with a value
// that was refused (an alias) maps to nil: it is not reported missing too.
type fieldNodes map[string]*yaml.Node

// parseFamily reads one document's mapping into a family. It reports every
// problem to p and returns ok=false if there was any.
func parseFamily(p *problems, m *yaml.Node) (family, bool) {
	before := len(p.errs)
	f := family{file: p.file, line: m.Line, Kill: model.KillSupervisor, Driver: model.DefaultDriver}
	if m.Kind != yaml.MappingNode {
		p.add(m.Line, "document", "a window definition must be a mapping", "write `id: W1`, `operation: ...` and the other fields as keys")
		return f, false
	}
	fields := mapping(p, m, "", topFields)
	for _, name := range required {
		if _, present := fields[name]; !present {
			p.addf(m.Line, name, "add `"+name+": ...` to this definition", "missing required field")
		}
	}
	if n := fields["id"]; n != nil {
		f.idLine = n.Line
		f.ID, _ = str(p, n, "id")
		switch {
		case f.ID == "":
		case utf8.RuneCountInString(f.ID) > MaxIDChars:
			p.addf(n.Line, "id", "shorten it, like W17 or ORPHAN", "%d characters, at most %d", utf8.RuneCountInString(f.ID), MaxIDChars)
		case !idPattern.MatchString(f.ID):
			p.addf(n.Line, "id", "use capitals and digits only, like W17 or ORPHAN", "%q is not a valid family id", f.ID)
		}
	}
	if n := fields["driver"]; n != nil {
		f.Driver, _ = str(p, n, "driver")
	}
	spec, known := p.specs[f.Driver]
	if !known && f.Driver != "" {
		p.addf(fieldLine(fields, "driver", m.Line), "driver", "use one of "+strings.Join(p.driverNames(), ", ")+", or give the supervisor's description beside the windows (faultwin lint mysup.yaml windows/mysup/) or with --supervisor mysup.yaml", "unknown driver %q", f.Driver)
	}
	f.spec = spec
	if n := fields["operation"]; n != nil {
		if f.Operation, _ = str(p, n, "operation"); known && f.Operation != "" && !slices.Contains(spec.Operations, f.Operation) {
			p.addf(n.Line, "operation", "use one of "+strings.Join(spec.Operations, ", "), "%s has no operation %q", f.Driver, f.Operation)
		}
	}
	if n := fields["point"]; n != nil {
		if f.Point, _ = str(p, n, "point"); known && f.Point != "" {
			if _, ok := spec.Point(f.Point); !ok {
				p.addf(n.Line, "point", "use one of "+strings.Join(windowPoints(spec), ", ")+", or add the point to the supervisor and publish it in its driver's spec", "%s has no fault point %q", f.Driver, f.Point)
			}
		}
	}
	if n := fields["delays_ms"]; n != nil {
		f.Delays = delays(p, n)
	}
	if n := fields["kill"]; n != nil {
		if f.Kill, _ = str(p, n, "kill"); f.Kill != "" && !slices.Contains(kills, f.Kill) {
			p.addf(n.Line, "kill", "use "+strings.Join(kills, " or "), "unknown kill %q", f.Kill)
		}
	}
	if n := fields["lands_in"]; n != nil {
		if n.Kind == yaml.MappingNode {
			f.LandsAt = landsAt(p, n)
		} else {
			f.LandsIn, _ = str(p, n, "lands_in")
		}
	}
	if n := fields["second_death"]; n != nil {
		f.SecondDeath, _ = str(p, n, "second_death")
	}
	if n := fields["precondition"]; n != nil {
		f.Pre = precondition(p, n)
	}
	if n := fields["criteria"]; n != nil {
		f.crit = criteria(p, n)
	}
	if n := fields["labels"]; n != nil {
		f.Labels = labels(p, n)
	}
	if n := fields["description"]; n != nil {
		d, _ := str(p, n, "description")
		f.Description = strings.Join(strings.Fields(d), " ")
		if len(f.Description) > MaxDescriptionBytes {
			p.addf(n.Line, "description", "say what the window tests in a paragraph; put longer notes in a YAML comment", "%d bytes after folding whitespace, at most %d", len(f.Description), MaxDescriptionBytes)
		}
	}
	if len(p.errs) == before {
		crossCheck(p, &f, fields)
	}
	return f, len(p.errs) == before
}

// mapping checks a mapping's keys (strings, known, not repeated) and returns
// the value node of each field present. prefix names the parent field.
func mapping(p *problems, m *yaml.Node, prefix string, known []string) fieldNodes {
	fields := fieldNodes{}
	keyLine := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			p.addf(k.Line, prefix+"?", "use a plain field name", "a key must be a field name, not %s", describe(k))
			continue
		}
		name := prefix + k.Value
		if !slices.Contains(known, k.Value) {
			p.addf(k.Line, name, "known fields here: "+strings.Join(known, ", "), "unknown field")
			continue
		}
		if first, dup := keyLine[k.Value]; dup {
			p.addf(k.Line, name, "keep one of the two", "field repeated (first at line %d)", first)
			continue
		}
		keyLine[k.Value] = k.Line
		if v.Kind == yaml.AliasNode {
			p.add(v.Line, name, "YAML aliases are not allowed in window definitions", "write the value out")
			v = nil
		}
		fields[k.Value] = v
	}
	return fields
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "empty"
	}
	return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
}

func str(p *problems, n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || strings.TrimSpace(n.Value) == "" {
		p.addf(n.Line, field, "write a non-empty text value", "must be a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func integer(p *problems, n *yaml.Node, field string) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		p.addf(n.Line, field, "write a whole number", "must be an integer, got %s", describe(n))
		return 0, false
	}
	return v, true
}

func boolean(p *problems, n *yaml.Node, field string) bool {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		p.addf(n.Line, field, "write true or false", "must be a boolean, got %s", describe(n))
		return false
	}
	return v
}

func list(p *problems, n *yaml.Node, field string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.addf(n.Line, field, "write a non-empty list, like [a, b]", "must be a non-empty list, got %s", describe(n))
		return nil
	}
	return n.Content
}

func delays(p *problems, n *yaml.Node) []int {
	var out []int
	seen := map[int]int{}
	for i, item := range list(p, n, "delays_ms") {
		field := fmt.Sprintf("delays_ms[%d]", i)
		d, ok := integer(p, item, field)
		switch {
		case !ok:
		case d < MinDelayMS || d > MaxDelayMS:
			p.addf(item.Line, field, fmt.Sprintf("use %d..%d ms after CRIU starts", MinDelayMS, MaxDelayMS), "delay %d ms is out of range", d)
		case seen[d] > 0:
			p.addf(item.Line, field, "remove the repeat", "delay %d ms repeated (first at line %d)", d, seen[d])
		default:
			seen[d] = item.Line
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// landsAt reads lands_in given per delay ({30: prepare, 150: runc}).
func landsAt(p *problems, n *yaml.Node) map[int]string {
	out := map[int]string{}
	if len(n.Content) == 0 {
		p.addf(n.Line, "lands_in", "write a phase, or one per delay like {30: prepare, 150: runc}", "empty mapping")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		d, ok := integer(p, k, "lands_in")
		if !ok {
			continue
		}
		field := "lands_in." + strconv.Itoa(d)
		if _, dup := out[d]; dup {
			p.addf(k.Line, field, "remove the repeat", "delay %d ms repeated", d)
			continue
		}
		if phase, ok := str(p, v, field); ok {
			out[d] = phase
		}
	}
	return out
}

func precondition(p *problems, n *yaml.Node) model.Precondition {
	var pre model.Precondition
	if n.Kind != yaml.MappingNode {
		p.addf(n.Line, "precondition", "write a mapping like {cold: 1, checkpoint: true}", "must be a mapping, got %s", describe(n))
		return pre
	}
	fields := mapping(p, n, "precondition.", preFields)
	count := func(name string) int {
		v := fields[name]
		if v == nil {
			return 0
		}
		c, ok := integer(p, v, "precondition."+name)
		if ok && (c < 0 || c > maxSessions) {
			p.addf(v.Line, "precondition."+name, fmt.Sprintf("use 0..%d sessions", maxSessions), "%d sessions is out of range", c)
		}
		return c
	}
	flag := func(name string) bool {
		if v := fields[name]; v != nil {
			return boolean(p, v, "precondition."+name)
		}
		return false
	}
	pre.Cold = count("cold")
	pre.Restored = count("restored")
	pre.Checkpoint = flag("checkpoint")
	pre.Display = flag("display")
	pre.FailRestore = flag("fail_restore")
	if v := fields["network_lock"]; v != nil {
		switch lock, _ := str(p, v, "precondition.network_lock"); lock {
		case "", "skip":
		case model.NetworkLockNftables:
			pre.NetworkLock = lock
		default:
			p.addf(v.Line, "precondition.network_lock", "use skip (the default) or nftables", "unknown network lock %q", lock)
		}
	}
	return pre
}

// critChanges is a definition's criteria: the whole list (list), or
// changes to its driver's default (add and remove, written +X and -X), or
// nothing (given false: the default).
type critChanges struct {
	given, changes    bool
	list, add, remove []string
	line              int
}

func criteria(p *problems, n *yaml.Node) critChanges {
	cc := critChanges{given: true, line: n.Line}
	seen := map[string]int{}
	sign := map[string]byte{}
	signed, plain := 0, 0
	for i, item := range list(p, n, "criteria") {
		field := fmt.Sprintf("criteria[%d]", i)
		c, ok := str(p, item, field)
		if ok && (strings.HasPrefix(c, "+") || strings.HasPrefix(c, "-")) {
			sign[c[1:]] = c[0]
			c = c[1:]
			signed++
		} else if ok {
			plain++
		}
		switch {
		case !ok:
		case !slices.Contains(model.CriterionIDs, c):
			p.addf(item.Line, field, "use "+strings.Join(model.CriterionIDs, ", "), "unknown criterion %q", c)
		case seen[c] > 0:
			p.addf(item.Line, field, "remove the repeat", "criterion %s repeated (first at line %d)", c, seen[c])
		default:
			seen[c] = item.Line
		}
	}
	if signed > 0 && plain > 0 {
		p.addf(n.Line, "criteria", "write only changes to the supervisor's criteria (+X, -X), or the whole list", "mixes a whole list with changes")
	}
	cc.changes = signed > 0
	for _, c := range model.CriterionIDs {
		switch {
		case seen[c] == 0:
		case sign[c] == '+':
			cc.add = append(cc.add, c)
		case sign[c] == '-':
			cc.remove = append(cc.remove, c)
		default:
			cc.list = append(cc.list, c)
		}
	}
	return cc
}

// resolveCriteria sets f.Criteria: the list f wrote, or its driver's default for
// its operation with f's changes.
func (f *family) resolveCriteria(p *problems) {
	if f.crit.given && !f.crit.changes {
		f.Criteria = f.crit.list
		return
	}
	base := f.spec.DefaultCriteria(f.Operation)
	at := f.crit.line
	if at == 0 {
		at = f.line
	}
	for _, c := range f.crit.add {
		if slices.Contains(base, c) {
			p.addf(at, "criteria", "remove +"+c, "%s is among %s's criteria for %s already", c, f.Driver, f.Operation)
		}
	}
	for _, c := range f.crit.remove {
		if !slices.Contains(base, c) {
			p.addf(at, "criteria", "remove -"+c, "%s is not among %s's criteria for %s", c, f.Driver, f.Operation)
		}
	}
	f.Criteria = nil
	for _, c := range model.CriterionIDs {
		if (slices.Contains(base, c) || slices.Contains(f.crit.add, c)) && !slices.Contains(f.crit.remove, c) {
			f.Criteria = append(f.Criteria, c)
		}
	}
}

func labels(p *problems, n *yaml.Node) []string {
	var out []string
	seen := map[string]int{}
	items := list(p, n, "labels")
	if len(items) > MaxLabels {
		p.addf(n.Line, "labels", "keep the labels a filter selects on", "%d labels, at most %d", len(items), MaxLabels)
	}
	for i, item := range items {
		field := fmt.Sprintf("labels[%d]", i)
		l, ok := str(p, item, field)
		switch {
		case !ok:
		case utf8.RuneCountInString(l) > MaxLabelChars:
			p.addf(item.Line, field, "shorten it", "label of %d characters, at most %d", utf8.RuneCountInString(l), MaxLabelChars)
		case !labelPattern.MatchString(l):
			p.addf(item.Line, field, "use lower-case letters, digits, '.', '_' and '-'", "label %q is not valid", l)
		case seen[l] > 0:
			p.addf(item.Line, field, "remove the repeat", "label %q repeated (first at line %d)", l, seen[l])
		default:
			seen[l] = item.Line
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
