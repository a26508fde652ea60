package main

import (
	"errors"
	"io"
	"os"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/ledger"
)

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
	out := api.Owned{Mounts: []string{}, Links: []string{}, Tables: []string{}, Processes: []api.PID{},
		X11: []string{}, Sysctls: []string{}, Cgroups: []string{}, CRIUTables: []api.OwnedCRIUTable{}}
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
		out.CRIUTables = append(out.CRIUTables, api.OwnedCRIUTable{Invocation: t.Invocation, Netns: t.Netns, RunIDs: ids})
	}
	for _, in := range l.Intents {
		oi := api.OwnedIntent{Session: in.Session, Verb: in.Verb, Images: in.Images, Started: in.Started}
		for _, inv := range l.CRIU {
			if inv.Dir == in.Images && inv.PID > 0 {
				oi.CRIUPID, oi.CRIUStart = inv.PID, inv.Start
			}
		}
		out.Intents = append(out.Intents, oi)
	}
	return printJSON(stdout, out)
}
