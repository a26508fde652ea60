package refsup

import (
	"context"
	"time"

	"faultwin/drivers/triggers"
	"faultwin/internal/model"
)

// externalPoints are instants seen from outside refsup, for the twins of
// windows whose points refsup fires itself: the same kill made by the
// harness's external trigger, with nothing armed in the supervisor, must
// give the same verdict. The supervisor is the operation's process here.
var externalPoints = []model.Point{
	{Name: "restore.ext_start", Operation: "restore", Timed: true, Watch: model.WatchOperation,
		Kill: []string{model.WatchOperation}, Desc: "SIGKILL refsup a number of ms after the restore call starts, from outside"},
	{Name: "restore.ext_criu", Operation: "restore", Timed: true, CRIU: true, Watch: "criu",
		Kill: []string{model.WatchOperation}, Desc: "SIGKILL refsup a number of ms after its CRIU appears, from outside (twin of restore.during_criu)"},
	{Name: "restore.ext_criu_only", Operation: "restore", Timed: true, CRIU: true, Watch: "criu",
		Kill: []string{"criu"}, Desc: "SIGKILL only refsup's CRIU a number of ms after it appears, from outside: refsup lives on and handles the failed restore"},
	{Name: "restore.ext_criu_first", Operation: "restore", Timed: true, CRIU: true, Watch: "criu",
		Kill: []string{"criu", model.WatchOperation}, Desc: "CRIU's top process, then refsup, a number of ms after CRIU appears, from outside (twin of restore.during_criu with kill: criu_first)"},
}

// criuRole is CRIU as the external trigger sees it: refsup's swrk shim
// execs it, its restorer forks are criu too, and only the top one is
// killed first.
var criuRole = triggers.Role{Name: "criu", Comms: []string{model.CRIUComm}, Top: true}

// external is an external trigger while the operation runs.
type external struct {
	w      *triggers.Watcher
	result *triggers.Result
}

// startExternal arms pt's trigger on the daemon before op is called.
func (d *Driver) startExternal(ctx context.Context, pt model.Point) error {
	daemon, err := triggers.Identify(d.daemon.pid)
	if err != nil {
		return err
	}
	w, err := triggers.Start(ctx, triggers.Plan{
		Run: d.run, Roles: []triggers.Role{criuRole}, Watch: pt.Watch, Kill: pt.Kill,
		Delay:  time.Duration(d.fault.DelayMS) * time.Millisecond,
		Within: 30 * time.Second, GoneWait: 3 * time.Second, Disarmed: d.fault.Disarmed,
	}, daemon)
	if err != nil {
		return err
	}
	d.ext = &external{w: w}
	return nil
}

// finishExternal ends the watch once the operation returned: a trigger
// that has not fired by its delay and a margin never will.
func (d *Driver) finishExternal() {
	if d.ext == nil || d.ext.result != nil {
		return
	}
	r := d.ext.w.Finish(time.Duration(d.fault.DelayMS)*time.Millisecond + 500*time.Millisecond)
	d.ext.result = &r
}

func externalPoint(name string) (model.Point, bool) {
	for _, p := range externalPoints {
		if p.Name == name {
			return p, true
		}
	}
	return model.Point{}, false
}

func isExternal(name string) bool { _, ok := externalPoint(name); return ok }
