package triggers

import (
	"context"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/model"
)

// BenchmarkTriggerLatency measures how long after a phase's evidence the
// trigger's SIGKILL goes out: a watch on phase "helper_runs" (appeared
// helper), delay 0, kill helper; a process with comm helper is started,
// and the latency is from the moment its exec returned (its evidence is
// at most that old) to the victim's KilledAt; from before its fork too,
// an upper bound. Reported as median and p95
// in ms, and the largest seen: what a window's delay can resolve
// (docs/describe-a-supervisor.md, "Timing").
func BenchmarkTriggerLatency(b *testing.B) {
	needRoot(b)
	helper := tool(b, "/bin/sleep", "helper")
	var lat, fromFork []time.Duration
	for b.Loop() {
		run := newRun(b)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		w, err := Start(ctx, Plan{
			Run:        run,
			Roles:      []Role{{Name: "helper", Comms: []string{"helper"}}},
			Phases:     []Phase{{Name: "prepare"}, {Name: "helper_runs", Appeared: "helper"}},
			WatchPhase: "helper_runs", Kill: []string{"helper"}, Within: 5 * time.Second,
		}, model.PID{})
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // the watch's first scan is taken: the helper is new to it
		cmd := exec.Command(helper, "30")
		cmd.Env = []string{model.RunEnvKey + "=" + run}
		forked := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now() // Start returns once the exec succeeded
		res := w.Wait()
		cancel()
		err = cmd.Wait()
		if !res.Fired || len(res.Victims) == 0 || res.Victims[0].Err != "" {
			b.Fatalf("did not fire on the helper: %+v", res)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			b.Fatalf("the helper was not killed by SIGKILL: %v", err)
		}
		lat = append(lat, res.Victims[0].KilledAt.Sub(t0))
		fromFork = append(fromFork, res.Victims[0].KilledAt.Sub(forked))
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
	b.ReportMetric(ms(lat[len(lat)*95/100]), "p95-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	// From before the fork: an upper bound, fork and exec included.
	slices.Sort(fromFork)
	b.ReportMetric(ms(fromFork[len(fromFork)/2]), "fork-median-ms")
	b.ReportMetric(0, "ns/op")
}
