package decoded

import (
	"regexp"

	"faultwin/criteria"
	"faultwin/internal/model"
)

// The facts older rows spell only in prose are read here, and only here,
// into the fields newer rows record them in, so every reader after the
// decode takes the field.

// legacyWorkaround is how a stuck U1's summary named its expert step
// before criteria.Result.Workaround was recorded.
var legacyWorkaround = regexp.MustCompile(`^` + model.GradeStuck + `: .*; only the expert step (\S+) brought it back$`)

// upgrade fills, in results recorded before their fields existed, what
// the prose of the time said.
func upgrade(rs []criteria.Result) {
	for i := range rs {
		r := &rs[i]
		if r.ID == model.U1 && r.Workaround == "" && r.Judged && !r.Pass {
			if m := legacyWorkaround.FindStringSubmatch(r.Summary); m != nil {
				r.Workaround = m[1]
			}
		}
	}
}
