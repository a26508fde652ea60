package main

import (
	"errors"
	"io"
	"os"
	"time"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/ledger"
)

// Owned is what `refsup owned` prints: the run's ledger, flattened.
type Owned struct {
	Ledger    bool      `json:"ledger"` // whether a ledger file exists
	Mounts    []string  `json:"mounts"`
	Links     []string  `json:"links"`
	Tables    []string  `json:"tables"`
	Processes []api.PID `json:"processes"`
	X11       []string  `json:"x11"`
	Sysctls   []string  `json:"sysctls"`
	Cgroups   []string  `json:"cgroups"`
	// CRIUTables are the CRIU calls whose network lock may have left a
	// table: the netns it is in ("" for the host's) and CRIU's run ids
	// (the table is inet CRIU-<run id, cut to 21 characters>).
	CRIUTables []OwnedCRIUTable `json:"criu_tables"`
	// Intents are the captures in flight, each with its CRIU call's swrk
	// process when one was recorded.
	Intents []OwnedIntent `json:"intents,omitempty"`
}

// OwnedIntent is one capture intent.
type OwnedIntent struct {
	Session   string    `json:"session"`
	Verb      string    `json:"verb"`
	Images    string    `json:"images"`
	Started   time.Time `json:"started"`
	CRIUPID   int       `json:"criu_pid,omitempty"`
	CRIUStart uint64    `json:"criu_start,omitempty"`
}

// OwnedCRIUTable is one recorded CRIU network lock.
type OwnedCRIUTable struct {
	Invocation string   `json:"invocation"`
	Netns      string   `json:"netns"`
	RunIDs     []string `json:"run_ids"`
}

func cmdOwned(stdout io.Writer, args []string) error {
	var c common
	fs := newFlags("owned", &c)
	if err := parse(fs, args); err != nil {
		return err
	}
	lay, err := c.layout("owned")
	if err != nil {
		return err
	}
	out := Owned{Mounts: []string{}, Links: []string{}, Tables: []string{}, Processes: []api.PID{},
		X11: []string{}, Sysctls: []string{}, Cgroups: []string{}, CRIUTables: []OwnedCRIUTable{}}
	l, err := ledger.Load(lay.Ledger())
	if errors.Is(err, os.ErrNotExist) {
		return printJSON(stdout, out)
	}
	if err != nil {
		return err
	}
	out.Ledger = true
	for _, m := range l.Mounts {
		out.Mounts = append(out.Mounts, m.Path)
	}
	for _, k := range l.Links {
		out.Links = append(out.Links, k.Name)
	}
	for _, t := range l.Tables {
		out.Tables = append(out.Tables, t.Name)
	}
	for _, p := range l.Processes {
		out.Processes = append(out.Processes, api.PID{PID: p.PID, StartTime: p.Start})
	}
	for _, x := range l.X11 {
		out.X11 = append(out.X11, x.Path)
	}
	for _, s := range l.Sysctls {
		out.Sysctls = append(out.Sysctls, s.Key+"="+s.Prev)
	}
	for _, c := range l.Cgroups {
		out.Cgroups = append(out.Cgroups, c.Path)
	}
	for _, t := range l.CRIUTables {
		ids := append([]string{}, t.RunIDs...)
		out.CRIUTables = append(out.CRIUTables, OwnedCRIUTable{Invocation: t.Invocation, Netns: t.Netns, RunIDs: ids})
	}
	for _, in := range l.Intents {
		oi := OwnedIntent{Session: in.Session, Verb: in.Verb, Images: in.Images, Started: in.Started}
		for _, inv := range l.CRIU {
			if inv.Dir == in.Images && inv.PID > 0 {
				oi.CRIUPID, oi.CRIUStart = inv.PID, inv.Start
			}
		}
		out.Intents = append(out.Intents, oi)
	}
	return printJSON(stdout, out)
}
