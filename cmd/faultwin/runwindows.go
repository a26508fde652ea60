package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"faultwin/internal/model"
	"faultwin/windows/runner"
)

// statusExit maps the worst status of a run to the exit codes every verb
// shares: 0 all PASS, 1 a FAIL, 2 only INVALID besides PASS, 3 an ERROR.
type statusExit struct {
	code int
	msg  string
}

func (e statusExit) Error() string { return e.msg }
func (e statusExit) ExitCode() int { return e.code }

// exitFor returns nil when every status is PASS, else the shared exit error.
func exitFor(counts map[string]int) error {
	switch {
	case counts[model.StatusError] > 0:
		return statusExit{3, fmt.Sprintf("%d window(s) ERROR: the harness broke", counts[model.StatusError])}
	case counts[model.StatusFail] > 0:
		return statusExit{1, fmt.Sprintf("%d window(s) FAIL", counts[model.StatusFail])}
	case counts[model.StatusInvalid] > 0:
		return statusExit{2, fmt.Sprintf("%d window(s) INVALID (not measurements)", counts[model.StatusInvalid])}
	}
	return nil
}

func selfDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}

// windowFlags are the flags of every verb that runs windows (run, soak).
type windowFlags struct {
	dir, filter, out, root, bin, bugs, logs *string
}

func addWindowFlags(fs *flag.FlagSet, defaultOut string) *windowFlags {
	return &windowFlags{
		dir:    fs.String("windows", "windows", "directory of window definitions (*.yaml)"),
		filter: fs.String("label-filter", "", "ginkgo label filter, e.g. 'W3 && timed' or 'restore'"),
		out:    fs.String("results", defaultOut, "JSONL file rows are appended to"),
		root:   fs.String("state-root", model.DefaultStateRoot, "refsup state root"),
		bin:    fs.String("refsup", filepath.Join(selfDir(), "refsup"), "refsup binary"),
		bugs:   fs.String("bugs", "", "comma-separated refsup known-bug switches (mutant runs only)"),
		logs:   fs.String("logs", "out/logs", "directory for the supervisor's own stdout, one subdir per window (rows carry the logs too)"),
	}
}

// windowSession is what running windows needs once per invocation: the
// selected windows, something that runs one, and the runner's session that
// records rows. run and soak share it so a soak row is built exactly like a
// run row.
type windowSession struct {
	windows []model.Window
	runner  windowRunner
	*runner.Session
}

// open selects the windows and opens the runner's session.
func (f *windowFlags) open(stdout io.Writer) (*windowSession, error) {
	ws, err := runner.LoadWindows(*f.dir)
	if err != nil {
		return nil, err
	}
	if ws, err = runner.Select(ws, *f.filter); err != nil {
		return nil, fmt.Errorf("--label-filter: %w", err)
	}
	var bugs []string
	if *f.bugs != "" {
		bugs = strings.Split(*f.bugs, ",")
	}
	cfg := runner.Config{Bin: *f.bin, StateRoot: *f.root, Bugs: bugs, LogDir: *f.logs}
	s, err := runner.Open(cfg, ".", *f.out, nil)
	if err != nil {
		return nil, err
	}
	return &windowSession{windows: ws, runner: s.Runner, Session: s}, nil
}

// closeSession seals the session's rows (if not sealed with a note already)
// and closes the results file, adding its failure to err: a file left
// unsealed must not go unnoticed.
func closeSession(s *windowSession, err error) error {
	if cerr := s.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("closing %s: %w", s.Results, cerr))
	}
	return err
}

// windowRunner runs one window; *runner.Runner is the real one, and the
// soak's tests script outcomes through it without touching the host.
type windowRunner interface {
	Run(ctx context.Context, w model.Window) (*runner.Outcome, error)
}

func runWindows(ctx context.Context, stdout io.Writer, args []string) (err error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stdout)
	wf := addWindowFlags(fs, "out/windows.jsonl")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected arguments %q", fs.Args())
	}
	s, err := wf.open(stdout)
	if err != nil {
		return err
	}
	defer func() { err = closeSession(s, err) }()
	ws := s.windows
	counts := map[string]int{}
	t0 := time.Now()
	for i, win := range ws {
		if ctx.Err() != nil {
			serr := s.Seal(fmt.Sprintf("run interrupted after %d of %d windows: %v", i, len(ws), ctx.Err()))
			return errors.Join(ctx.Err(), exitFor(counts), serr)
		}
		o, err := s.runner.Run(ctx, win)
		if err == nil {
			_, err = s.Record(o)
		}
		if err != nil {
			err = fmt.Errorf("window %s: %w", win.ID, err)
			return errors.Join(err, s.Seal("stopped: "+err.Error()))
		}
		counts[o.Verdict.Status]++
		elapsed := time.Since(t0)
		eta := time.Duration(float64(elapsed) / float64(i+1) * float64(len(ws)-i-1))
		fmt.Fprintf(stdout, "[%d/%d] %-8s %-7s %6.1fs  %s  (eta %s)\n", i+1, len(ws), win.ID, o.Verdict.Status,
			o.Finished.Sub(o.Started).Seconds(), o.Verdict.Reason, eta.Round(time.Second))
	}
	fmt.Fprintf(stdout, "%d windows in %s: %d PASS, %d FAIL, %d INVALID, %d ERROR; rows in %s\n", len(ws),
		time.Since(t0).Round(time.Millisecond), counts[model.StatusPass], counts[model.StatusFail],
		counts[model.StatusInvalid], counts[model.StatusError], s.Results)
	return exitFor(counts)
}
