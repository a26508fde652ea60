package runner

import (
	"fmt"
	"strings"
)

// HowToClean is the advice every check of a clean host ends with, so the
// preflight's refusal, hostcheck, sweep and a stopped suite say the same.
func HowToClean(stateRoot string) string {
	return fmt.Sprintf(`clean it with the supervisor's own sweep: sudo make sweep   (= bin/faultwin sweep --state-root %s)
  for a described supervisor's leftovers under host-global names (podman's netns, bridge, chains) add --reclaim-names: bin/faultwin sweep --reclaim-names
  it sweeps each run under the state root with its supervisor, removes the harness's decoys, and kills what runs whose state dir is gone left (by tag, namespace or cgroup)
anything it names as left was not tied to a faultwin run: remove it by hand
  a process that "holds" a run's file is not faultwin's to kill: the host is clean once it closes it or ends
`, stateRoot)
}

// StopMessage is the one message a run of windows stops with when a window
// left the host unclean: what is left, why no later window runs, and how
// to clean it (notRun < 0: a count the caller does not know). Every later window would be INVALID at its preflight on the
// same leftovers, measuring nothing of its supervisor.
func StopMessage(id string, o *Outcome, notRun int, stateRoot string) string {
	var b strings.Builder
	if o.HostLeftAt == "preflight" {
		fmt.Fprintf(&b, "host unclean at the preflight of window %s, which did not run; %d leftovers:\n", id, len(o.HostLeft))
	} else {
		fmt.Fprintf(&b, "host left unclean after window %s (%s", id, o.Verdict.Status)
		if o.Verdict.Reason != "" {
			fmt.Fprintf(&b, ": %s", o.Verdict.Reason)
		}
		fmt.Fprintf(&b, "); its sweeps and the last resort left %d leftovers:\n", len(o.HostLeft))
	}
	for _, l := range o.HostLeft {
		fmt.Fprintf(&b, "  - %s\n", l)
	}
	if o.Reclaim != nil && len(o.Reclaim.Thawed) > 0 {
		fmt.Fprintf(&b, "the last resort thawed before its kill: %s\n", strings.Join(o.Reclaim.Thawed, ", "))
	}
	if o.Reclaim != nil && len(o.Reclaim.Errors) > 0 {
		fmt.Fprintf(&b, "the last resort could not remove them: %s\n", strings.Join(o.Reclaim.Errors, "; "))
	}
	if notRun >= 0 {
		fmt.Fprintf(&b, "stopped: the %d windows after it are NOT RUN (each would be INVALID at its preflight on these leftovers)\n", notRun)
	} else {
		b.WriteString("stopped: the windows after it are NOT RUN (each would be INVALID at its preflight on these leftovers)\n")
	}
	b.WriteString(HowToClean(stateRoot))
	return b.String()
}
