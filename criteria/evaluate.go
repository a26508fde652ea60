package criteria

import (
	"strings"

	"faultwin/internal/model"
)

func normID(id string) string { return strings.ToUpper(strings.TrimSpace(id)) }

// Evaluate judges one window. It runs the gatekeepers PRE and F1, then the
// window's listed criteria in their listed order, and derives the status:
//
//   - HarnessErr set: ERROR (the harness broke; nothing it measured counts);
//   - PRE not holding: INVALID (the host was not clean before the window);
//   - PrepareErr set: INVALID (the precondition was never reached);
//   - F1 not holding: INVALID (the fault did not land as armed);
//   - any criterion not judged: INVALID (evidence missing or incomplete);
//   - any listed criterion false: FAIL;
//   - otherwise PASS.
//
// An unknown listed id is reported as not judged, so a window cannot pass
// on a criterion nobody checked. Evaluate is deterministic: the same input
// gives byte-identical JSON.
func Evaluate(in Input) Verdict {
	c := newCtx(in)
	ids := []string{model.PRE, model.F1}
	seen := map[string]bool{model.PRE: true, model.F1: true}
	for _, id := range in.Window.Criteria {
		id = normID(id)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	v := Verdict{}
	for _, id := range ids {
		if cr, ok := registry[id]; ok && cr.judge != nil {
			v.Results = append(v.Results, cr.judge(c))
			continue
		}
		v.Results = append(v.Results, Result{ID: id, Summary: "not judged: no evaluator for criterion " + id})
	}
	v.Status, v.Reason = status(in, v.Results)
	return v
}

// status applies the precedence documented on Evaluate.
func status(in Input, rs []Result) (string, string) {
	if in.HarnessErr != "" {
		if in.PrepareErr != "" {
			// The precondition failing first is usually what made the
			// harness's later steps fail: name it first.
			return model.StatusError, "precondition not reached: " + in.PrepareErr + "; then harness error: " + in.HarnessErr
		}
		return model.StatusError, "harness error: " + in.HarnessErr
	}
	if r := rs[0]; !r.Holds() {
		return model.StatusInvalid, "preflight: " + r.Summary
	}
	if in.PrepareErr != "" {
		return model.StatusInvalid, "precondition not reached: " + in.PrepareErr
	}
	if r := rs[1]; !r.Holds() {
		return model.StatusInvalid, "F1: " + r.Summary
	}
	var unjudged, failed []string
	for _, r := range rs {
		switch {
		case !r.Judged:
			unjudged = append(unjudged, r.ID+" ("+r.Summary+")")
		case !r.Pass:
			failed = append(failed, r.ID)
		}
	}
	if len(unjudged) > 0 {
		return model.StatusInvalid, strings.Join(unjudged, "; ")
	}
	if len(failed) > 0 {
		return model.StatusFail, strings.Join(failed, ", ") + " false"
	}
	return model.StatusPass, "all " + plural(len(rs), "criterion", "criteria") + " hold"
}
