package render

import (
	"fmt"
	"sort"
	"strings"

	"faultwin/reports/review"
)

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

func spread(s review.Spread) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f / %.2f / %.2f", s.Min, s.Median, s.Max)
}

// stamp is when a run's first window started, to the second.
func stamp(r Run) string {
	if r.Started.IsZero() {
		return "-"
	}
	return r.Started.UTC().Format("2006-01-02 15:04:05")
}

// failedTally renders {P1: 2, P3: 1} as "P1 ×2, P3 ×1".
func failedTally(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s ×%d", id, m[id])
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}
