package criteria

import "faultwin/internal/model"

// IDs returns every criterion id this package can judge, gatekeepers first.
func IDs() []string {
	return append([]string{model.PRE}, model.CriterionIDs...)
}

// Known reports whether id names a criterion this package can judge.
func Known(id string) bool {
	_, ok := registry[normID(id)]
	return ok
}
