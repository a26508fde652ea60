package review

import (
	"fmt"
	"strings"

	"faultwin/criteria"
)

// resultDiff is one criterion's difference between recorded and recomputed.
type resultDiff struct {
	id, detail string
}

// compareResults matches recorded and recomputed results by id and reports
// every field that differs, every result only one side has, and a changed
// order (the order is the window's criteria list, so it is evidence too).
func compareResults(recorded, recomputed []criteria.Result) []resultDiff {
	var out []resultDiff
	rec := index(recorded)
	now := index(recomputed)
	seen := map[string]bool{}
	for _, r := range recorded {
		if seen[r.ID] {
			out = append(out, resultDiff{r.ID, "recorded more than once"})
		}
		seen[r.ID] = true
		if _, ok := now[r.ID]; !ok {
			out = append(out, resultDiff{r.ID, "recorded but not recomputed (the window's criteria do not include it)"})
		}
	}
	for _, n := range recomputed {
		r, ok := rec[n.ID]
		if !ok {
			out = append(out, resultDiff{n.ID, fmt.Sprintf("recomputed (pass=%t) but not recorded", n.Pass)})
			continue
		}
		out = append(out, compareResult(r, n)...)
	}
	if len(out) == 0 && len(recorded) == len(recomputed) {
		for i := range recorded {
			if recorded[i].ID != recomputed[i].ID {
				out = append(out, resultDiff{"", fmt.Sprintf("criteria recorded in order %s, recomputed in order %s", ids(recorded), ids(recomputed))})
				break
			}
		}
	}
	return out
}

func compareResult(r, n criteria.Result) []resultDiff {
	var out []resultDiff
	if r.Pass != n.Pass {
		out = append(out, resultDiff{n.ID, fmt.Sprintf("recorded pass=%t, recomputed pass=%t", r.Pass, n.Pass)})
	}
	if r.Judged != n.Judged {
		out = append(out, resultDiff{n.ID, fmt.Sprintf("recorded judged=%t, recomputed judged=%t", r.Judged, n.Judged)})
	}
	if r.Summary != n.Summary {
		out = append(out, resultDiff{n.ID, fmt.Sprintf("summary recorded %q, recomputed %q", r.Summary, n.Summary)})
	}
	if d := evidenceDiff(r.Evidence, n.Evidence); d != "" {
		out = append(out, resultDiff{n.ID, d})
	}
	if r.Workaround != n.Workaround {
		out = append(out, resultDiff{n.ID, fmt.Sprintf("workaround recorded %q, recomputed %q", r.Workaround, n.Workaround)})
	}
	return out
}

// evidenceDiff names the first evidence line that differs, or "".
func evidenceDiff(rec, now []string) string {
	for i := 0; i < max(len(rec), len(now)); i++ {
		switch {
		case i >= len(rec):
			return fmt.Sprintf("evidence: %d lines recorded, %d recomputed; first extra recomputed line %q", len(rec), len(now), now[i])
		case i >= len(now):
			return fmt.Sprintf("evidence: %d lines recorded, %d recomputed; first extra recorded line %q", len(rec), len(now), rec[i])
		case rec[i] != now[i]:
			return fmt.Sprintf("evidence line %d recorded %q, recomputed %q", i+1, rec[i], now[i])
		}
	}
	return ""
}

func index(rs []criteria.Result) map[string]criteria.Result {
	m := make(map[string]criteria.Result, len(rs))
	for _, r := range rs {
		m[r.ID] = r
	}
	return m
}

func ids(rs []criteria.Result) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.ID
	}
	return "[" + strings.Join(s, " ") + "]"
}
