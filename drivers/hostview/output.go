package hostview

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"faultwin/internal/model"
)

// HeldGrace is how long after a call's exit its output may still drain
// before the processes holding its pipes are named.
const HeldGrace = 100 * time.Millisecond

// Output gives a command stdout and stderr pipes the harness made itself,
// so that Wait returns when the process exits: with exec's own pipes Wait
// also waits for every process that inherited them (a restore tool that
// daemonises a monitor keeps them open), and a call that is over reads
// as hung. What arrives after Done is drained and dropped, so the holder
// never meets a closed pipe.
type Output struct {
	mu   sync.Mutex // serialises both streams' writes; Done shuts them
	shut bool
	dst  [2]io.Writer
	r, w [2]*os.File
	eof  [2]chan struct{}
}

// Capture makes the pipes and sets cmd's Stdout and Stderr; the
// destinations are written from goroutines under one lock. Call Started
// after cmd.Start, whether it succeeded or not, and Done after cmd.Wait.
func Capture(cmd *exec.Cmd, stdout, stderr io.Writer) (*Output, error) {
	o := &Output{dst: [2]io.Writer{stdout, stderr}}
	for i := range o.r {
		r, w, err := os.Pipe()
		if err != nil {
			o.closeAll()
			return nil, err
		}
		o.r[i], o.w[i], o.eof[i] = r, w, make(chan struct{})
		go o.copy(i)
	}
	cmd.Stdout, cmd.Stderr = o.w[0], o.w[1]
	return o, nil
}

func (o *Output) copy(i int) {
	defer close(o.eof[i])
	defer o.r[i].Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := o.r[i].Read(buf)
		if n > 0 {
			o.mu.Lock()
			if !o.shut {
				_, _ = o.dst[i].Write(buf[:n])
			}
			o.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (o *Output) closeAll() {
	for i := range o.r {
		if o.w[i] != nil {
			o.w[i].Close()
		}
		if o.r[i] != nil {
			o.r[i].Close()
		}
	}
}

// Started closes the harness's write ends: the command has its own.
func (o *Output) Started() {
	for _, w := range o.w {
		_ = w.Close()
	}
}

// Done waits up to grace for both streams to end and stops writing to
// the destinations; it returns the processes still holding a pipe then.
func (o *Output) Done(grace time.Duration) []model.Holder {
	var open []uint64
	deadline := time.After(grace)
	for i, eof := range o.eof {
		select {
		case <-eof:
			continue
		case <-deadline:
			deadline = time.After(0)
		}
		select {
		case <-eof:
		default:
			if ino, ok := inode(o.r[i]); ok {
				open = append(open, ino)
			}
		}
	}
	o.mu.Lock()
	o.shut = true
	o.mu.Unlock()
	if len(open) == 0 {
		return nil
	}
	return holders(open)
}

func inode(f *os.File) (uint64, bool) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}

// holders are the processes, this one aside, with one of the pipes open.
func holders(pipes []uint64) []model.Holder {
	want := map[string]bool{}
	for _, ino := range pipes {
		want["pipe:["+strconv.FormatUint(ino, 10)+"]"] = true
	}
	ps, err := Procs()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []model.Holder
	for _, p := range ps {
		if p.PID == self {
			continue
		}
		dir := filepath.Join(ProcRoot, strconv.Itoa(p.PID), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		if slices.ContainsFunc(fds, func(e os.DirEntry) bool {
			l, err := os.Readlink(filepath.Join(dir, e.Name()))
			return err == nil && want[l]
		}) {
			out = append(out, model.Holder{PID: p.PID, Comm: p.Comm})
		}
	}
	return out
}
