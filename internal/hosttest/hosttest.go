// Package hosttest marks the tests that need the real host: root,
// namespaces, mounts, links, nftables, CRIU. `make unit` sets
// FAULTWIN_TESTS=unit and such a test skips there, naming the tier that runs
// it; everywhere else a missing prerequisite fails the test, so a host test
// never passes by skipping in the tier that owns it.
package hosttest

import (
	"os"
	"testing"
)

// TierEnv names the test tier; "unit" is the one without root.
const TierEnv = "FAULTWIN_TESTS"

// Unit reports whether this is `make unit`: no root, nothing on the host.
func Unit() bool { return os.Getenv(TierEnv) == "unit" }

// Need marks t as a host test; why says what of the host it touches.
func Need(t testing.TB, why string) {
	t.Helper()
	if Unit() {
		t.Skipf("host test (%s): `make integration` runs it as root", why)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("needs root: %s; run it as root (make integration; CI does), or `make unit` for the tests that need none", why)
	}
}
