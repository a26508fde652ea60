package windows

import "faultwin/windows/def"

// Labels returns the ginkgo labels of w, so operators can filter by
// instance ("W3_30"), family ("W3"), operation ("restore") or kind.
func Labels(w def.Window) []string {
	l := []string{"window", w.ID, w.Operation}
	if w.Family != w.ID {
		l = append(l, w.Family)
	}
	if w.Fault.DelayMS > 0 {
		l = append(l, "timed")
	}
	if w.Fault.Kill == "criu_first" {
		l = append(l, "criu-first")
	}
	if w.Precondition.Display {
		l = append(l, "display")
	}
	return append(l, w.Labels...)
}
