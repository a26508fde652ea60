package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"faultwin/fixtures/refsup/bugs"
	"faultwin/fixtures/refsup/criu"
	"faultwin/fixtures/refsup/paths"
)

const usage = `usage: refsup <verb> --root <state root> --run <id> [flags]

verbs:
  serve      run the daemon in the foreground [--bug name]... [--tag faultwin:<id>]
             [--network-lock nftables|skip] [--recover]
  create     make a cold session [--display]
  checkpoint dump a session (consumes it) --session <id>
  restore    restore a clone --checkpoint <id> [--fail-after-criu]
  destroy    destroy a session --session <id>
  hibernate  dump a session and stop it, to be woken from its images --session <id>
  save       dump a session and leave it running --session <id>
  wake       wake a hibernated session from its images --session <id>
  list       list sessions and checkpoints
  inspect    describe a session --session <id>
  arm        arm a fault for the next operation --fault <point>[+<ms>][!criu|!hold]
  idle       an operation that only passes point idle.kill
  points     list the compiled fault points (no daemon needed)
  sweep      clean up the run, daemon dead or alive [--bug name]...
  owned      print what the run's ledger says it owns (no daemon needed)
  unlock     release a dead daemon's restore lock --checkpoint <id> (no daemon needed)
`

// run is the whole CLI; main only calls it.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no verb given")
	}
	verb, rest := args[0], args[1:]
	switch verb {
	case "serve":
		return cmdServe(ctx, stdout, stderr, rest)
	case "create", "checkpoint", "restore", "destroy", "hibernate", "save", "wake", "list", "inspect", "arm", "idle", "ping":
		return cmdClient(ctx, stdout, verb, rest)
	case "points":
		return cmdPoints(stdout, rest)
	case "sweep":
		return cmdSweep(ctx, stdout, rest)
	case "owned":
		return cmdOwned(stdout, rest)
	case "unlock":
		return cmdUnlock(stdout, rest)
	case "session-init":
		return cmdSessionInit(rest)
	case "subreaper":
		return cmdSubreaper(stdout, stderr, rest)
	case criu.SwrkVerb:
		// go-criu starting "its CRIU binary": become criu --no-default-config swrk
		return criu.ExecSwrk(rest)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown verb %q", verb)
}

// common holds the flags every verb takes.
type common struct {
	root, run string
	bugs      multi
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func newFlags(verb string, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet("refsup "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.root, "root", "", "state root")
	fs.StringVar(&c.run, "run", "", "run id")
	return fs
}

func (c *common) layout(verb string) (paths.Layout, error) {
	if c.root == "" || c.run == "" {
		return paths.Layout{}, fmt.Errorf("%s needs --root <state root> and --run <id>", verb)
	}
	return paths.NewLayout(c.root, c.run)
}

func (c *common) bugSet() (bugs.Set, error) { return bugs.Parse(c.bugs) }

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
