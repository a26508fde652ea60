package hostview

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"faultwin/internal/model"
)

// maxOutput bounds what a call's record keeps of its output.
const maxOutput = 1 << 20

// Call runs cmd, one call of a user's recovery after a crash, bounded:
// still running at bound, it is recorded with the processes it left
// waiting (Stuck) and killed with its whole process group (cmd must have
// been made with Setpgid to own one). The record has the call's exit, its
// signal, its time and its output (a call that could not start has exit
// -1 and the reason at the end of its output).
func Call(ctx context.Context, cmd *exec.Cmd, run string, bound time.Duration) model.UserCall {
	uc, _ := Run(ctx, cmd, run, bound)
	return uc
}

// Run is the one bounded call of the harness (Call, and every command a
// described supervisor's driver runs): Call's record, and the error a
// caller that stops on failure reports: the start's or the wait's error
// (a non-zero exit, a signal), or the bound reached.
func Run(ctx context.Context, cmd *exec.Cmd, run string, bound time.Duration) (model.UserCall, error) {
	return RunWatched(ctx, cmd, run, bound, nil)
}

// RunWatched is Run, calling started (when not nil) once the process
// started and before it is waited for: a watch of what it starts needs
// its pid.
func RunWatched(ctx context.Context, cmd *exec.Cmd, run string, bound time.Duration, started func(pid int)) (model.UserCall, error) {
	// The output as the user sees it, both streams in order; and stdout
	// alone, what a list's view is read from (a warning on stderr is not
	// part of it).
	var out, stdout bytes.Buffer
	errs := &countingWriter{w: &out}
	uc := model.UserCall{Argv: cmd.Args}
	// Output's lock serialises the two streams into out.
	o, err := Capture(cmd, io.MultiWriter(&out, &stdout), errs)
	if err != nil {
		uc.Exit, uc.Output = -1, err.Error()
		return uc, err
	}
	kill := func() {
		if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
	}
	t0 := time.Now()
	err = cmd.Start()
	o.Started()
	if err == nil {
		if started != nil {
			started(cmd.Process.Pid)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		timer := time.NewTimer(bound)
		select {
		case err = <-done:
		case <-timer.C:
			uc.TimedOut = true
			uc.Stuck = Stuck(cmd.Process.Pid, run)
			kill()
			<-done
			err = fmt.Errorf("still running after %v: killed by the harness", bound)
		case <-ctx.Done():
			kill()
			<-done
			err = fmt.Errorf("stopped by the harness: %w", ctx.Err())
		}
		timer.Stop()
	}
	// The call is over when its process is: a child that inherited its
	// output and lives on is named, not waited for.
	uc.MS = float64(time.Since(t0).Microseconds()) / 1000
	uc.HeldOpen = o.Done(HeldGrace)
	b := out.Bytes()
	if len(b) > maxOutput {
		b = b[len(b)-maxOutput:]
	}
	uc.Output = string(b)
	if errs.n > 0 {
		so := stdout.Bytes()
		if len(so) > maxOutput {
			so = so[len(so)-maxOutput:]
		}
		s := string(so)
		uc.Stdout = &s
	}
	if ps := cmd.ProcessState; ps != nil {
		uc.Exit = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			uc.Signal = model.SignalName(ws.Signal())
		}
	} else if err != nil {
		uc.Exit, uc.Output = -1, uc.Output+err.Error()
	}
	return uc, err
}

// FirstRead reads a workload's identity once its payload has written one
// (a payload writes at once; allow it within).
func FirstRead(name string, loc Locate, within time.Duration) model.Workload {
	w := Once(name, loc)
	for deadline := time.Now().Add(within); w.Boot == "" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		w = Once(name, loc)
	}
	return w
}

// countingWriter counts what passes through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return c.w.Write(p)
}
