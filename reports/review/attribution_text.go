package review

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteAB prints each window's arms, then a line per way it failed,
//
//	PCL9  P3  cgroup libpod-<id>  fault 7/10  control 6/10  diff +0.10 [-0.31, +0.48]  baseline
//
// (k/N: the FAIL rows showing it of the PASS and FAIL rows), with, for a
// failure not separable yet, how many more runs of each arm would decide.
func WriteAB(w io.Writer, ws []WindowAB) error {
	ew := &errWriter{w: w}
	ew.printf("fault and control: k/N = FAIL rows showing it / PASS+FAIL rows; diff = fault rate - control rate, 95%% Newcombe interval\n")
	for _, wa := range ws {
		ew.printf("%s  fault %s  control %s\n", wa.Window, armText(wa.Fault), armText(wa.Control))
		if wa.Control.Measured() == 0 {
			ew.printf("  no control rows measured: run it disarmed to tell the kill's failures from the supervisor's own\n")
		}
		tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', 0)
		for _, a := range wa.Attributions {
			diff := "diff n/a"
			if a.FaultN > 0 && a.ControlN > 0 {
				diff = fmt.Sprintf("diff %+.2f [%+.2f, %+.2f]", a.Diff, a.Lo, a.Hi)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\tfault %d/%d\tcontrol %d/%d\t%s\t%s%s\n", a.Window, a.Criterion, Cut(a.Class, 80),
				a.FaultK, a.FaultN, a.ControlK, a.ControlN, diff, a.Verdict, moreNote(a))
		}
		tw.Flush()
	}
	return ew.err
}

func armText(a Arm) string {
	s := fmt.Sprintf("PASS %d FAIL %d INVALID %d ERROR %d", a.Pass, a.Fail, a.Invalid, a.Error)
	if a.Unknown > 0 {
		s += fmt.Sprintf(" UNKNOWN %d", a.Unknown)
	}
	return s
}

// moreNote says what would decide an unseparated failure; a window with
// no controls has said it once already.
func moreNote(a Attribution) string {
	switch {
	case a.Verdict != Unseparated || a.ControlN == 0 || a.FaultN == 0:
		return ""
	case a.More > 0:
		return fmt.Sprintf("  (about %d more runs of each would decide)", a.More)
	}
	return "  (never at these rates)"
}
