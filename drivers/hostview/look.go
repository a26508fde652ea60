package hostview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"faultwin/internal/model"
)

// LookTries bounds how often a look is repeated while the host changes
// under it (a killed operation's helpers may still be finishing).
const LookTries = 3

// lookPause is how long a look waits before it is repeated.
const lookPause = 300 * time.Millisecond

// A Lister is a supervisor's own list call, as its driver makes it: call
// runs it (recording it in a.Calls) and returns its index; parse reads
// the workloads it reports from its output, with the lines it could not
// read.
type Lister struct {
	Call  func() int
	Parse func(output string) (reported []model.Reported, unmatched []string, err error)
}

// Look is the one look loop of every driver: the workloads as the
// supervisor reports them, with the host read by find just before and just
// after the call. A look during which the host changed is repeated, a
// moment later, up to LookTries. Every look is appended to a.Looks, with
// why it cannot be trusted in ParseErr: a list that does not parse, a line
// that matches no workload (it may be one: reading the rest as the whole
// view would call it absent), a host that could not be read.
func Look(ctx context.Context, a *model.Aftermath, when string, names []string, find Finder, l Lister) {
	for try := 1; try <= LookTries; try++ {
		lk := model.Look{When: when, Reported: []model.Reported{}}
		pre, perr := Workloads(names, find)
		lk.HostPre = pre
		lk.Call = l.Call()
		call := a.Calls[lk.Call]
		seen := slices.Clone(names)
		if !call.Failed() {
			rep, bad, err := l.Parse(call.ListOutput())
			lk.Reported, lk.Unmatched = rep, bad
			if lk.Reported == nil {
				lk.Reported = []model.Reported{}
			}
			if err != nil {
				lk.ParseErr = err.Error()
			} else if len(bad) > 0 {
				lk.ParseErr = fmt.Sprintf("%d line(s) of the list match no entry of the description: %q", len(bad), bad[0])
			}
			for _, r := range rep {
				if !slices.Contains(seen, r.Name) {
					seen = append(seen, r.Name)
				}
			}
		}
		post, qerr := Workloads(seen, find)
		lk.HostPost = post
		if len(seen) > len(names) {
			// The names only the list added were not read before the
			// call: the read after it stands for them there too.
			lk.HostPre = mergePre(pre, post)
		}
		if perr != nil || qerr != nil {
			lk.ParseErr = strings.TrimPrefix(lk.ParseErr+"; ", "; ") + fmt.Sprintf("reading the host: %v %v", perr, qerr)
		}
		a.Looks = append(a.Looks, lk)
		if lk.Still() || call.Failed() || ctx.Err() != nil {
			return
		}
		time.Sleep(lookPause)
	}
}

// mergePre keeps the reads taken before the call and adds, for names only
// the list named, the read taken once it had answered (post).
func mergePre(pre, late []model.HostWorkload) []model.HostWorkload {
	out := slices.Clone(pre)
	for _, h := range late {
		if !slices.ContainsFunc(pre, func(p model.HostWorkload) bool { return p.Name == h.Name }) {
			out = append(out, h)
		}
	}
	return out
}
