package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	gocriu "github.com/checkpoint-restore/go-criu/v7"
	"github.com/checkpoint-restore/go-criu/v7/rpc"
	"google.golang.org/protobuf/proto"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/paths"
)

// criuPath is the CRIU refsup runs (make deps installs 4.2.1 there).
const criuPath = "/opt/faultwin/criu/sbin/criu"

// criuSelf matches the timestamp CRIU puts before each log line: seconds
// since CRIU started, which its last line makes CRIU's own time for a call.
var criuSelf = regexp.MustCompile(`^\((\d+)\.(\d+)\)`)

// The measures of one session's round, each timed each way.
const (
	rawDumpT    = iota // go-criu swrk dump of the live session (left running)
	rawSelf            // CRIU's own time in it
	ckptT              // refsup checkpoint of the same session
	ckptSelf           // CRIU's own time in it
	restoreT           // refsup restore of that checkpoint
	restoreSelf        // CRIU's own time in it
	beforeCRIU         // refsup's steps before CRIU starts, from its trace
	afterDump          // refsup's steps after CRIU's dump, from its trace
	nMeasures
)

// refsupRound is one session's measures.
type refsupRound [nMeasures]time.Duration

// refsupVsCRIU creates sessions with refsup and, for each, dumps it once
// with go-criu's swrk directly (the options refsup gives CRIU, tree left
// running), then checkpoints and restores it through refsup: the same
// session, side by side. CRIU's own time for each call comes from its log.
func refsupVsCRIU(refsup, stateRoot string, n int) {
	fmt.Println("refsup checkpoint and restore vs CRIU on the same session")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	run := "bench" + hex.EncodeToString(b)
	lay, err := paths.NewLayout(stateRoot, run)
	if err != nil {
		fmt.Printf("  %v\n\n", err)
		return
	}
	daemon := exec.Command(refsup, "serve", "--root", stateRoot, "--run", run, "--tag", lay.Tag())
	daemon.Env = append(os.Environ(), "FAULTWIN_RUN="+run)
	out, err := daemon.StdoutPipe()
	if err == nil {
		err = daemon.Start()
	}
	if err != nil {
		fmt.Printf("  starting refsup: %v\n\n", err)
		return
	}
	defer func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
		if o, err := exec.Command(refsup, "sweep", "--root", stateRoot, "--run", run).CombinedOutput(); err != nil {
			fmt.Printf("  refsup sweep of %s: %v\n%s", run, err, o)
		}
		_ = os.RemoveAll(lay.Dir())
	}()
	if l, _ := bufio.NewReader(out).ReadString('\n'); !strings.Contains(l, "serving") {
		fmt.Printf("  refsup did not start: %q\n\n", l)
		return
	}
	var rounds []refsupRound
	for i := 0; i < n; i++ {
		r, err := oneRound(lay, i)
		if err != nil {
			fmt.Printf("  round %d: %v\n\n", i+1, err)
			return
		}
		rounds = append(rounds, r)
	}
	var m refsupRound
	for k := range m {
		ds := make([]time.Duration, len(rounds))
		for i, r := range rounds {
			ds[i] = r[k]
		}
		m[k] = median(ds)
	}
	raw, rawS, ck, ckS, rs, rsS := m[rawDumpT], m[rawSelf], m[ckptT], m[ckptSelf], m[restoreT], m[restoreSelf]
	fmt.Printf("  medians of %d sessions:\n", n)
	fmt.Printf("  go-criu swrk dump (left running)  %7.1f ms  (CRIU's own %5.1f ms, swrk and RPC %5.1f ms)\n", msf(raw), msf(rawS), msf(raw-rawS))
	fmt.Printf("  refsup checkpoint                 %7.1f ms  (CRIU's own %5.1f ms)   %.2fx the swrk dump, %.2fx CRIU's own\n",
		msf(ck), msf(ckS), ratio(ck, raw), ratio(ck, ckS))
	fmt.Printf("    of which before CRIU starts %.1f ms, after its dump (kill, save upper, unmount, network, cgroups, bind) %.1f ms\n",
		msf(m[beforeCRIU]), msf(m[afterDump]))
	fmt.Printf("  refsup restore                    %7.1f ms  (CRIU's own %5.1f ms)   %.2fx CRIU's own, %.2fx CRIU's own plus swrk\n\n",
		msf(rs), msf(rsS), ratio(rs, rsS), ratio(rs, rsS+raw-rawS))
}

func oneRound(lay paths.Layout, i int) (refsupRound, error) {
	var r refsupRound
	var s api.SessionInfo
	if err := call(lay, api.Request{Verb: "create"}, &s); err != nil {
		return r, err
	}
	// Let the payload count, as a window's precondition does.
	time.Sleep(300 * time.Millisecond)
	var st syscall.Stat_t
	if err := syscall.Stat(lay.Netns(s.Session), &st); err != nil {
		return r, fmt.Errorf("netns of %s: %w", s.Session, err)
	}
	dir := filepath.Join(lay.Dir(), fmt.Sprintf("bench-raw-%d", i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	t0 := time.Now()
	if err := rawDump(dir, s.InitPID, st.Ino); err != nil {
		return r, err
	}
	r[rawDumpT] = time.Since(t0)
	var err error
	if r[rawSelf], err = criuLogTime(filepath.Join(dir, "dump.log")); err != nil {
		return r, err
	}
	_ = os.RemoveAll(dir)

	traceFrom := traceLen(lay)
	var ck api.CheckpointInfo
	t0 = time.Now()
	if r[ckptT], err = timedCall(lay, api.Request{Verb: "checkpoint", Session: s.Session}, &ck); err != nil {
		return r, err
	}
	if r[ckptSelf], err = criuLogTime(filepath.Join(lay.Logs(), fmt.Sprintf("criu-dump-%s-%s.log", ck.Checkpoint, s.Session))); err != nil {
		return r, err
	}
	pts := traceSince(lay, traceFrom)
	if started, ok := pts["checkpoint.criu_started"]; ok {
		r[beforeCRIU] = started.Sub(t0)
	}
	if d, ok := pts["checkpoint.after_dump"]; ok {
		r[afterDump] = t0.Add(r[ckptT]).Sub(d)
	}

	var rs api.SessionInfo
	if r[restoreT], err = timedCall(lay, api.Request{Verb: "restore", Checkpoint: ck.Checkpoint}, &rs); err != nil {
		return r, err
	}
	if r[restoreSelf], err = criuLogTime(filepath.Join(lay.Logs(), fmt.Sprintf("criu-restore-%s-%s.log", ck.Checkpoint, rs.Session))); err != nil {
		return r, err
	}
	return r, call(lay, api.Request{Verb: "destroy", Session: rs.Session}, nil)
}

// rawDump is refsup's dump request made straight to go-criu: the session's
// netns external under refsup's key, cgroups ignored, no network lock
// (refsup's default), the tree left running.
func rawDump(dir string, pid int, netIno uint64) error {
	img, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer img.Close()
	opts := &rpc.CriuOpts{
		Pid:               proto.Int32(int32(pid)),
		ImagesDirFd:       proto.Int32(int32(img.Fd())),
		WorkDirFd:         proto.Int32(int32(img.Fd())),
		LogFile:           proto.String("dump.log"),
		LogLevel:          proto.Int32(4),
		LeaveRunning:      proto.Bool(true),
		NetworkLock:       rpc.CriuNetworkLockMethod_SKIP.Enum(),
		ManageCgroupsMode: rpc.CriuCgMode_IGNORE.Enum(),
		External:          []string{fmt.Sprintf("net[%d]:extNetNs", netIno)},
	}
	c := gocriu.MakeCriu()
	c.SetCriuPath(criuPath)
	if err := c.Dump(opts, nil); err != nil {
		return fmt.Errorf("go-criu dump of pid %d (log %s/dump.log): %w", pid, dir, err)
	}
	return nil
}

// timedCall is call, timed from the request to the decoded answer.
func timedCall(lay paths.Layout, req api.Request, v any) (time.Duration, error) {
	t0 := time.Now()
	err := call(lay, req, v)
	return time.Since(t0), err
}

func call(lay paths.Layout, req api.Request, v any) error {
	data, err := api.Call(lay.Socket(), req, 2*time.Minute)
	if err != nil {
		return fmt.Errorf("refsup %s: %w", req.Verb, err)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(data, v)
}

// criuLogTime is the timestamp of the log's last stamped line.
func criuLogTime(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var last time.Duration
	for _, l := range strings.Split(string(b), "\n") {
		m := criuSelf.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s, _ := strconv.Atoi(m[1])
		frac := (m[2] + "000000")[:6]
		us, _ := strconv.Atoi(frac)
		last = time.Duration(s)*time.Second + time.Duration(us)*time.Microsecond
	}
	if last == 0 {
		return 0, fmt.Errorf("no timestamped line in CRIU log %s", path)
	}
	return last, nil
}

func traceLen(lay paths.Layout) int {
	b, _ := os.ReadFile(lay.Trace())
	return len(b)
}

// traceSince reads the trace points refsup appended after offset.
func traceSince(lay paths.Layout, offset int) map[string]time.Time {
	b, _ := os.ReadFile(lay.Trace())
	out := map[string]time.Time{}
	if offset > len(b) {
		return out
	}
	for _, l := range strings.Split(string(b[offset:]), "\n") {
		var tp api.TracePoint
		if json.Unmarshal([]byte(l), &tp) == nil && tp.Point != "" {
			out[tp.Point] = tp.Time
		}
	}
	return out
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
