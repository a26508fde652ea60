package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/reexec"
)

// mapperHelper is the helper (reexec) a Mapper runs as.
const mapperHelper = "test-mapper"

func init() {
	reexec.Register(mapperHelper, func(args []string) int {
		if err := mapAndWait(args[0]); err != nil {
			fmt.Fprintln(os.Stderr, "mapper:", err)
			return 2
		}
		return 0
	})
}

// Main is the TestMain of a package whose tests start a helper of the
// test binary (a Mapper, a daemon's reaper): in a helper's process it is
// the helper (reexec.Init), and otherwise it runs the tests.
func Main(m *testing.M) {
	reexec.Init()
	os.Exit(m.Run())
}

// Mapper is a process of the test binary (its TestMain calls Main) that
// maps path shared, closes the descriptor, prints "ready" and waits: once
// it is ready only the mapping ties it to the file. Its environment holds
// nothing but the helper's name, so nothing in it ties it to a run.
func Mapper(path string) *exec.Cmd {
	cmd, err := reexec.Command(mapperHelper, nil, path)
	if err != nil {
		// the test binary's TestMain is not Main: a programming error
		panic(err)
	}
	return cmd
}

func mapAndWait(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	b, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	f.Close()
	fmt.Println("ready", b[0])
	for {
		time.Sleep(time.Hour)
	}
}
