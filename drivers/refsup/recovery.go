package refsup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/drivers/hostview"
	"faultwin/fixtures/refsup/api"
	"faultwin/internal/model"
	"faultwin/internal/procstat"
)

// Sessions implements drivers.Recoverer: the first cold session is the one
// a capture window takes.
func (d *Driver) Sessions() (string, string) {
	if len(d.sessions) < 2 {
		return "", ""
	}
	return d.sessions[0], d.sessions[1]
}

func (d *Driver) socket() string { return filepath.Join(d.scope.StateDir, "refsup.sock") }

// inspect asks the supervisor for one session over its socket.
func (d *Driver) inspect(session string, timeout time.Duration) (api.SessionInfo, error) {
	var info api.SessionInfo
	data, err := api.Call(d.socket(), api.Request{Verb: "inspect", Session: session}, timeout)
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal(data, &info)
}

// Identity implements drivers.Recoverer: inspect, then inspect again until
// the counter moves, so a counter that moved shows the session runs. The
// payload writes every 100 ms; the second read is awaited up to
// hostview.ProgressBound and ends the moment the counter changes, so a
// running session costs one step of its payload and a CPU-starved one is
// not read as stopped after a fixed 300 ms. A session with no live process
// cannot move: it is read again once, 300 ms later, as before.
func (d *Driver) Identity(ctx context.Context, session string) model.Identity {
	id := model.Identity{Session: session, Taken: time.Now().UTC()}
	info, err := d.inspect(session, 30*time.Second)
	if err != nil {
		id.Err = err.Error()
		return id
	}
	id.State, id.Init = info.State, model.PID{PID: info.InitPID, StartTime: info.InitStart}
	id.InitAlive = len(info.Procs) > 0
	id.Marker, id.CounterMarker, id.Boot, id.Counter = info.Marker, info.CounterMrk, info.Boot, info.Counter
	bound, every := hostview.ProgressBound, identityPoll
	if !id.InitAlive {
		bound, every = 300*time.Millisecond, 300*time.Millisecond
	}
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			id.Err = ctx.Err().Error()
			return id
		case <-time.After(every):
		}
		again, err := d.inspect(session, 30*time.Second)
		if err != nil {
			id.Err = "second read: " + err.Error()
			return id
		}
		id.Counter2 = again.Counter
		if again.Counter != id.Counter || time.Since(start) >= bound {
			id.WaitedMS = float64(time.Since(start).Microseconds()) / 1000
			return id
		}
	}
}

// identityPoll is how often Identity reads a live session's counter again:
// an inspect is one call over the supervisor's socket.
const identityPoll = 20 * time.Millisecond

// Intents implements drivers.Recoverer, from `refsup owned`.
func (d *Driver) Intents(ctx context.Context) ([]model.Intent, error) {
	var out api.Owned
	if err := d.call(ctx, &out, "owned"); err != nil {
		return nil, err
	}
	ins := []model.Intent{}
	for _, in := range out.Intents {
		ins = append(ins, model.Intent{Session: in.Session, Verb: in.Verb, Images: in.Images, Started: in.Started,
			CRIU: model.PID{PID: in.CRIUPID, StartTime: in.CRIUStart}})
	}
	return ins, nil
}

// Restart implements drivers.Recoverer: `refsup serve --recover` under a
// subreaper of its own; the dead supervisor's stays, reaping what it held.
func (d *Driver) Restart(ctx context.Context, fault string) error {
	logf, err := os.OpenFile(filepath.Join(d.LogDir, "refsup-serve.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	args := append([]string{"serve", "--root", d.Root, "--run", d.run, "--tag", d.scope.Tag, "--recover"}, d.switchArgs()...)
	var env []string
	if fault != "" {
		env = append(env, "FAULTWIN_FAULT_AT="+fault)
	}
	if d.daemon != nil {
		d.old = append(d.old, d.daemon)
	}
	d.daemon, err = startDaemon(d.Bin, args, d.run, logf, env...)
	logf.Close()
	if err != nil {
		return err
	}
	if fault != "" {
		return nil
	}
	return d.waitServing(ctx)
}

// waitServing waits for the socket to answer a call that names no session
// (one that does would wait for its settle).
func (d *Driver) waitServing(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := api.Call(d.socket(), api.Request{Verb: "ping"}, 2*time.Second)
		if err == nil {
			return nil
		}
		if !d.daemon.alive() {
			return fmt.Errorf("refsup serve --recover exited before serving (%+v)", d.daemon.death)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("refsup serve --recover not serving after 15s: %w", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitDeath implements drivers.Recoverer.
func (d *Driver) WaitDeath(ctx context.Context) (model.Death, error) {
	select {
	case <-d.daemon.done:
		return d.daemon.death, nil
	case <-time.After(60 * time.Second):
		d.daemon.kill()
		death := d.daemon.death
		death.Note = "alive 60 s after its restart: the settle never reached the armed point; killed by the harness"
		return death, nil
	case <-ctx.Done():
		return model.Death{}, ctx.Err()
	}
}

// Settle implements drivers.Recoverer. Both calls go out at once, as soon
// as the restarted supervisor serves.
func (d *Driver) Settle(ctx context.Context, pending []model.Intent, hold bool) ([]model.Call, *time.Time, error) {
	var held []model.Intent
	if hold {
		held = pending
	}
	captured, other := d.Sessions()
	calls := []model.Call{{Session: captured, Role: "settling"}, {Session: other, Role: "other"}}
	done := make(chan struct{}, len(calls))
	for i := range calls {
		go func(c *model.Call) {
			defer func() { done <- struct{}{} }()
			c.Sent = time.Now().UTC()
			_, err := d.inspect(c.Session, 90*time.Second)
			c.Answered = time.Now().UTC()
			if err != nil {
				c.Err = err.Error()
			}
		}(&calls[i])
	}
	var released *time.Time
	var errs []error
	if len(held) > 0 {
		// Let the held CRIU go only once the settle has met it (or
		// finished without waiting): the restart must find it alive.
		if err := d.waitTrace(ctx, 5*time.Second, "settle.criu_wait", "settle.done"); err != nil {
			errs = append(errs, err)
		}
		time.Sleep(300 * time.Millisecond)
		for _, in := range held {
			if cont(in.CRIU) {
				now := time.Now().UTC()
				released = &now
			}
		}
	}
	for range calls {
		select {
		case <-done:
		case <-ctx.Done():
			return calls, released, ctx.Err()
		}
	}
	if len(pending) > 0 {
		if err := d.waitTrace(ctx, 60*time.Second, "settle.done"); err != nil {
			errs = append(errs, err)
		}
	}
	for _, in := range held {
		waitGone(in.CRIU, 30*time.Second)
	}
	return calls, released, errors.Join(errs...)
}

// cont sends SIGCONT to a held CRIU if (pid, start) still names it.
func cont(p model.PID) bool {
	if p.PID <= 0 || startOf(p.PID) != p.StartTime {
		return false
	}
	return unix.Kill(p.PID, unix.SIGCONT) == nil
}

func waitGone(p model.PID, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); p.PID > 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		st, err := procstat.Read("", p.PID)
		if err != nil || st.StartTime != p.StartTime || st.Zombie() {
			return
		}
	}
}

// startOf reads a process's start time (clock ticks since boot), 0 if gone.
func startOf(pid int) uint64 {
	st, err := procstat.Read("", pid)
	if err != nil {
		return 0
	}
	return st.StartTime
}

// waitTrace waits until the current supervisor has passed one of points,
// or has died.
func (d *Driver) waitTrace(ctx context.Context, timeout time.Duration, points ...string) error {
	deadline := time.Now().Add(timeout)
	for {
		tr, _ := d.Trace()
		for _, tp := range tr {
			if tp.PID == d.daemon.pid && slices.Contains(points, tp.Point) {
				return nil
			}
		}
		if !d.daemon.alive() {
			return fmt.Errorf("restarted refsup died before passing %v", points)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("restarted refsup did not pass %v within %s", points, timeout)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop implements drivers.Recoverer.
func (d *Driver) Stop() error {
	if d.daemon != nil {
		d.daemon.kill()
	}
	return nil
}

// Probe implements drivers.Recoverer.
func (d *Driver) Probe(ctx context.Context, run string, display bool) model.ReuseProbe {
	p := model.ReuseProbe{Run: run, Display: display}
	q := New(d.Bin, d.Root, filepath.Join(d.LogDir, "probe-"+run), nil)
	fail := func(err error) model.ReuseProbe {
		p.Err = err.Error()
		if q.daemon != nil {
			// the probe must not leave its own run for the next window
			q.daemon.kill()
			_, _ = q.Sweep(ctx)
		}
		return p
	}
	defer q.Close()
	if _, err := q.Prepare(ctx, run, model.Precondition{}); err != nil {
		return fail(err)
	}
	var created api.SessionInfo
	args := []string{"create"}
	if display {
		args = append(args, "--display")
	}
	if err := q.call(ctx, &created, args...); err != nil {
		return fail(err)
	}
	p.Steps = append(p.Steps, "create")
	var ck api.CheckpointInfo
	if err := q.call(ctx, &ck, "checkpoint", "--session", created.Session); err != nil {
		return fail(err)
	}
	p.Steps, p.Checkpoint = append(p.Steps, "checkpoint"), ck.Counter
	var info api.SessionInfo
	if err := q.call(ctx, &info, "restore", "--checkpoint", ck.Checkpoint); err != nil {
		return fail(err)
	}
	p.Steps = append(p.Steps, "restore")
	p.Restored = model.Identity{Session: info.Session, State: info.State, Init: model.PID{PID: info.InitPID, StartTime: info.InitStart},
		InitAlive: len(info.Procs) > 0, Marker: info.Marker, CounterMarker: info.CounterMrk, Boot: info.Boot,
		Counter: info.Counter, Taken: time.Now().UTC()}
	q.daemon.kill()
	rep, err := q.Sweep(ctx)
	if err != nil {
		return fail(err)
	}
	rep.Raw = nil
	p.Sweep = rep
	p.Steps = append(p.Steps, "sweep")
	return p
}
