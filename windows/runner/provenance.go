package runner

import (
	"encoding/json"
	"fmt"
	"sort"

	"faultwin/drivers/catalog"
	"faultwin/internal/gitcmd"
	"faultwin/reports/rows"
	"faultwin/windows/registration"
)

// Provenance is what every row of one invocation shares: the harness's
// commit and the registry the windows are checked against.
type Provenance struct {
	Registry *registration.Registry
	Commit   string
	Dirty    bool
	Err      string // why provenance is missing, if it is
}

// NewProvenance reads provenance from the git work tree at repoDir. The
// rows directory being appended to does not make the tree dirty.
func NewProvenance(repoDir string, ignore ...string) *Provenance {
	p := &Provenance{}
	var err error
	if p.Commit, p.Dirty, err = gitcmd.Commit(repoDir, ignore...); err != nil {
		p.Err = err.Error()
	}
	if p.Registry, err = registration.Open(repoDir, catalog.Specs()); err != nil {
		p.Err = joinMsg(p.Err, err.Error())
	}
	return p
}

// Row turns an outcome into the row written for it.
func (p *Provenance) Row(o *Outcome) (*rows.Row, error) {
	in, err := json.Marshal(o.Input)
	if err != nil {
		return nil, fmt.Errorf("encoding criteria input: %w", err)
	}
	crit, err := json.Marshal(o.Verdict.Results)
	if err != nil {
		return nil, fmt.Errorf("encoding criteria results: %w", err)
	}
	row := &rows.Row{
		Schema:    rows.Schema,
		Window:    o.Input.Window,
		Run:       rows.Run{Commit: p.Commit, Dirty: p.Dirty, Started: o.Started, Finished: o.Finished, Bugs: o.Bugs},
		Host:      o.Host,
		Driver:    o.Driver,
		Scope:     o.Input.Scope,
		Input:     in,
		Status:    o.Verdict.Status,
		Reason:    o.Verdict.Reason,
		Criteria:  crit,
		Durations: o.Durations,
		Reclaim:   o.Reclaim,
	}
	if p.Err != "" {
		row.Host.Missing = append(row.Host.Missing, "provenance: "+p.Err)
	}
	if p.Registry != nil {
		c, ok, err := p.Registry.Lookup(o.Input.Window)
		if err != nil {
			row.Host.Missing = append(row.Host.Missing, "registration: "+err.Error())
		}
		row.Registration = rows.Registration{Commit: c, Registered: ok}
	}
	names := make([]string, 0, len(o.Logs))
	for n := range o.Logs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		row.SetLog(n, o.Logs[n])
	}
	return row, nil
}
