package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"faultwin/drivers"
)

// tryOutputLines is how many of a step's last output lines try prints.
const tryOutputLines = 4

// renderStep prints one step of a try: its verdict, what, time and exit;
// the command; the end of its output; the roles and phases seen; and,
// when it failed, the fields of the description to look at.
func renderStep(w io.Writer, s drivers.TryStep) {
	word := "ok  "
	switch {
	case s.Failed():
		word = "FAIL"
	case s.Err != "":
		word = "warn"
	}
	fmt.Fprintf(w, "  %s %s (%s)\n", word, s.What, exitText(s))
	const in = "       "
	if len(s.Argv) > 0 {
		fmt.Fprintf(w, "%s$ %s\n", in, clip(shellWords(s.Argv), 400))
	}
	renderOutput(w, in, s)
	if len(s.HeldOpen) > 0 {
		var hs []string
		for _, h := range s.HeldOpen {
			hs = append(hs, fmt.Sprintf("pid %d (%s)", h.PID, h.Comm))
		}
		fmt.Fprintf(w, "%sexited after %s but its stdout/stderr stayed open: held by %s; the call is over at its exit, as in a window\n",
			in, seconds(s.Seconds), strings.Join(hs, ", "))
	}
	for _, r := range s.Roles {
		fmt.Fprintf(w, "%srole %s: pid %d comm %s cgroup %s argv %s\n", in, r.Role, r.PID, r.Comm, orDash(r.Cgroup), clip(shellWords(r.Argv), 200))
	}
	if len(s.Phases) > 0 {
		var seen []string
		for _, p := range s.Phases {
			if p.Seen {
				e := ""
				if p.Evidence != "" {
					e = " (" + p.Evidence + ")"
				}
				seen = append(seen, fmt.Sprintf("%s +%.3f s%s", p.Name, p.At, e))
			}
		}
		if len(seen) > 0 {
			fmt.Fprintf(w, "%sphases seen, in order: %s\n", in, strings.Join(seen, ", "))
		}
		for _, p := range s.NeverSeen() {
			fmt.Fprintf(w, "%sphase %s never seen (%s): look at %s\n", in, p.Name, orDash(p.Evidence), p.Field)
		}
		// An operation that ended before its phases: the supervisor's
		// answer (the line below) says why, not the phases' evidence.
		if unreached := s.Unreached(); len(unreached) > 0 {
			fmt.Fprintf(w, "%sphases not reached, the operation having ended (%s): %s\n", in, exitText(s), strings.Join(unreached, ", "))
		}
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "%s%s\n", in, n)
	}
	if s.Err != "" && s.Excused != "" {
		fmt.Fprintf(w, "%s%s: %s (not counted: %s)\n", in, orDash(strings.Join(s.Look[:min(1, len(s.Look))], "")), exitText(s), s.Excused)
	} else if s.Err != "" {
		field := "the step"
		if len(s.Look) > 0 {
			field = s.Look[0]
		}
		fmt.Fprintf(w, "%s%s: %s: %s; look at %s\n", in, field, exitText(s), clip(lastOutputLine(s), 300), andList(s.Look))
	}
}

// exitText is "exit 0 after 0.31 s", "SIGKILL after 30 s (timed out)".
func exitText(s drivers.TryStep) string {
	e := "exit " + strconv.Itoa(s.Exit)
	if s.Signal != "" {
		e = s.Signal
	}
	t := e + " after " + seconds(s.Seconds)
	if s.TimedOut {
		t += ", still running at timeout_ms: killed by the harness"
	}
	return t
}

func seconds(s float64) string {
	if s < 10 {
		return strconv.FormatFloat(s, 'f', 2, 64) + " s"
	}
	return strconv.FormatFloat(s, 'f', 1, 64) + " s"
}

// renderOutput prints the last lines of a step's output and where the
// rest is.
func renderOutput(w io.Writer, in string, s drivers.TryStep) {
	out := strings.TrimRight(s.Output, "\n")
	if strings.TrimSpace(out) == "" {
		fmt.Fprintf(w, "%swrote nothing\n", in)
		return
	}
	lines := strings.Split(out, "\n")
	show := lines[max(0, len(lines)-tryOutputLines):]
	if n := len(lines) - len(show); n > 0 {
		fmt.Fprintf(w, "%s| ... %d lines before, in %s\n", in, n, orDash(s.Log))
	}
	for _, l := range show {
		fmt.Fprintf(w, "%s| %s\n", in, clip(l, 200))
	}
}

func lastOutputLine(s drivers.TryStep) string {
	lines := strings.Split(strings.TrimSpace(s.Output), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return s.Err
}

// shellWords quotes the words that need it, as a shell would read them.
func shellWords(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$&;|<>(){}*?!#`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// andList is "a", "a and b", "a, b and c".
func andList(xs []string) string {
	switch len(xs) {
	case 0:
		return "the step"
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
