package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mapperEnv makes a test binary the mapper of Mapper instead of a test run.
const mapperEnv = "FAULTWIN_TEST_MAPPER"

// Main is a TestMain for the packages whose tests start a Mapper: in the
// mapper's process it maps and waits, and otherwise it runs the tests.
func Main(m *testing.M) {
	if os.Getenv(mapperEnv) != "" {
		if err := mapAndWait(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "mapper:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// Mapper is a process of the test binary (its TestMain calls Main) that
// maps path shared, closes the descriptor, prints "ready" and waits: once
// it is ready only the mapping ties it to the file.
func Mapper(path string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], path)
	cmd.Env = []string{mapperEnv + "=1"}
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
