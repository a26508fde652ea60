package main

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"faultwin/fixtures/refsup/api"
)

func cmdClient(_ context.Context, stdout io.Writer, verb string, args []string) error {
	var c common
	fs := newFlags(verb, &c)
	req := api.Request{Verb: verb}
	switch verb {
	case "create":
		fs.BoolVar(&req.Display, "display", false, "give the session Xvfb + openbox")
	case "checkpoint", "destroy", "inspect", "hibernate", "save", "wake":
		fs.StringVar(&req.Session, "session", "", "session id")
	case "restore":
		fs.StringVar(&req.Checkpoint, "checkpoint", "", "checkpoint id")
		fs.BoolVar(&req.FailAfterCRIU, "fail-after-criu", false, "inject a failure after CRIU restored the tree")
	case "arm":
		fs.StringVar(&req.Fault, "fault", "", "<point>[+<ms>][!criu|!hold]")
	}
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the daemon")
	if err := parse(fs, args); err != nil {
		return err
	}
	lay, err := c.layout(verb)
	if err != nil {
		return err
	}
	data, err := api.Call(lay.Socket(), req, *timeout)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return printJSON(stdout, v)
}
