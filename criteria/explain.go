package criteria

import "strings"

// Explain renders a verdict for a person: the status and reason, then each
// result, with every evidence line of those that do not hold.
func Explain(v Verdict) string {
	var b strings.Builder
	b.WriteString(v.Status + ": " + v.Reason + "\n")
	for _, r := range v.Results {
		b.WriteString(ExplainResult(r))
	}
	return b.String()
}

// ExplainResult renders one result: a line with its outcome and summary,
// then, unless it holds, every evidence line.
func ExplainResult(r Result) string {
	var b strings.Builder
	outcome := "holds"
	switch {
	case !r.Judged:
		outcome = "NOT JUDGED"
	case !r.Pass:
		outcome = "FALSE"
	}
	b.WriteString("  " + r.ID + " " + outcome + ": " + strings.TrimPrefix(r.Summary, "not judged: ") + "\n")
	if !r.Holds() {
		for _, e := range r.Evidence {
			b.WriteString("    - " + e + "\n")
		}
	}
	return b.String()
}
