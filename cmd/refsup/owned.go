package main

import (
	"errors"
	"io"
	"os"

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
		X11: []string{}, Sysctls: []string{}}
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
	return printJSON(stdout, out)
}
