package render

import (
	"sort"

	"faultwin/internal/model"
)

// sortedIDs returns the keys of ids in natural window order.
func sortedIDs(ids map[string]bool) []string {
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return model.CompareIDs(out[i], out[j]) < 0 })
	return out
}
