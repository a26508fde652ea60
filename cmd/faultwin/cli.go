package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"faultwin/drivers/catalog"
)

// The exit codes every verb shares. A verb's own usage says which of them
// it uses and when.
const (
	exitFail    = 1 // a FAIL, or a check the verb makes failed
	exitInvalid = 2 // INVALID and no FAIL or ERROR: not measurements
	exitError   = 3 // an ERROR: the harness broke
	// exitUnverified: the evidence does not verify (a chain, a seal, a
	// signature, a row that does not re-judge, a file that does not read
	// to its end): no verdict read from it stands.
	exitUnverified = 4
	exitUsage      = 64 // the command line cannot be run as given (EX_USAGE)
)

// exitCodesText is the exit-code table of `faultwin -h`.
const exitCodesText = `Exit status (every verb):
  0   success; for verbs that run or read rows: every row PASS
  1   a FAIL; or a check the verb makes failed (a missing prerequisite, an
      unclean host, a refused seal, compact or sign, mixed provenance, a
      lint problem)
  2   INVALID (not a measurement), and no FAIL or ERROR
  3   an ERROR: the harness broke
  4   the evidence does not verify (replay, report, merge, soak --summary,
      rows): a broken chain, a missing seal, a rejected signature, a row
      that does not re-judge as recorded, a file that does not read to its
      end; no verdict read from it stands
  64  a usage error: no verb, an unknown verb or flag, a bad flag value, a
      missing or extra argument, or an argument that names no evidence (a
      rows file or directory that does not exist or holds no rows)
`

// usageError is a command line that cannot be run as given: it exits 64,
// apart from every verdict, and says which verb's usage to read.
type usageError struct {
	verb string // "" for the command line as a whole
	msg  string
	err  error // the cause, if any (errors.Is sees it)
}

func (e *usageError) Error() string {
	if e.verb == "" {
		return e.msg + "; run `faultwin -h`"
	}
	return fmt.Sprintf("%s: %s; run `faultwin %s -h`", e.verb, e.msg, e.verb)
}

func (e *usageError) ExitCode() int { return exitUsage }

func (e *usageError) Unwrap() error { return e.err }

// usagef returns the usage error of verb.
func usagef(verb, format string, a ...any) error {
	return &usageError{verb: verb, msg: fmt.Sprintf(format, a...)}
}

// usageErr makes err, caused by what verb was given (a flag's value), a
// usage error; prefix names what was wrong ("--label-filter"), unless err
// says it already ("").
func usageErr(verb, prefix string, err error) error {
	msg := err.Error()
	if prefix != "" {
		msg = prefix + ": " + msg
	}
	return &usageError{verb: verb, msg: msg, err: err}
}

// errHelpShown is what a verb returns after printing its usage for -h or
// --help; run turns it into success.
var errHelpShown = errors.New("usage shown")

// verbFlags is the flag set of one verb: -h and --help print the verb's
// usage (its text, then its flags) to stdout, and every parse error is a
// usage error naming the verb.
type verbFlags struct {
	*flag.FlagSet
	verb  string
	usage string // synopsis and what the verb does; the flags follow
	out   io.Writer
	pos   []string  // the positional arguments, once parsed
	sups  *listFlag // --supervisor, on the verbs that load drivers
}

// supervisors adds --supervisor FILE (repeatable) to a verb that loads
// drivers: the same as naming FILE in FAULTWIN_SUPERVISORS.
func (f *verbFlags) supervisors() {
	f.sups = &listFlag{}
	f.Var(f.sups, "supervisor", "load the supervisor description `FILE` (or every *.yaml of a directory) besides the built-in ones; repeatable; the same as naming it in "+catalog.EnvDirs)
}

// newFlags returns the flag set of verb. usage starts with the verb's
// synopsis line ("usage: faultwin VERB ...").
func newFlags(stdout io.Writer, verb, usage string) *verbFlags {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, the usage printed by printUsage
	return &verbFlags{FlagSet: fs, verb: verb, usage: usage, out: stdout}
}

// printUsage writes the usage text and the flags.
func (f *verbFlags) printUsage() {
	fmt.Fprint(f.out, f.usage)
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(f.out, "\nFlags:")
	f.SetOutput(f.out)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// parse parses args: errHelpShown after printing the usage for -h or
// --help, a usage error for an unknown flag or a bad value.
// parse parses args with flags anywhere on the line (replay results/
// --signers F as replay --signers F results/): the standard parser stops at
// the first argument that is not a flag, so parsing goes on after each. An
// argument "--" ends the flags; what follows it is positional whatever it
// looks like.
func (f *verbFlags) parse(args []string) error {
	tail := []string(nil)
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	f.pos = nil
	for {
		err := f.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			f.printUsage()
			return errHelpShown
		case err != nil:
			return f.usagef("%v", err)
		}
		rest := f.FlagSet.Args()
		if len(rest) == 0 {
			break
		}
		f.pos, args = append(f.pos, rest[0]), rest[1:]
	}
	f.pos = append(f.pos, tail...)
	if f.sups != nil {
		for _, p := range *f.sups {
			if _, err := os.Stat(p); err != nil {
				return f.usagef("--supervisor %s: %v", p, err)
			}
		}
		catalog.Use(*f.sups)
	}
	return nil
}

// Args are the positional arguments, wherever they stood among the flags.
func (f *verbFlags) Args() []string { return f.pos }

// NArg is the number of positional arguments.
func (f *verbFlags) NArg() int { return len(f.pos) }

// Arg is the i'th positional argument, "" when there is none.
func (f *verbFlags) Arg(i int) string {
	if i < 0 || i >= len(f.pos) {
		return ""
	}
	return f.pos[i]
}

// usagef returns a usage error of this verb.
func (f *verbFlags) usagef(format string, a ...any) error { return usagef(f.verb, format, a...) }

// noArgs refuses positional arguments.
func (f *verbFlags) noArgs() error {
	if f.NArg() > 0 {
		return f.usagef("unexpected arguments %q", f.Args())
	}
	return nil
}

// noEvidence refuses an argument that names no rows to judge: the one
// message replay, report and soak --summary give for it.
func noEvidence(verb, path, why string) error {
	return usagef(verb, "%s %s: no evidence to judge; name rows files (.jsonl, .jsonl.gz) that hold rows, or a directory of them", path, why)
}

// missingPath refuses a path that does not exist, or passes on another
// error reading it.
func missingPath(verb, path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return noEvidence(verb, path, "does not exist")
	}
	return fmt.Errorf("%s: %w", verb, err)
}

func unknownVerb(vs map[string]verb, name string) error {
	return usagef("", "unknown verb %q (verbs: %s)", name, strings.Join(names(vs), ", "))
}
