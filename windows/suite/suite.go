// Package suite holds what the ginkgo suites that drive refsup share: root,
// the refsup binary, and settings read from the environment, so that
// `ginkgo run ./windows` and `ginkgo run ./windows/mutants` need no flags.
package suite

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// RefsupBinary is the first function of a SynchronizedBeforeSuite: it
// requires root and returns FAULTWIN_REFSUP, or refsup built for this suite.
func RefsupBinary(what string) []byte {
	Expect(os.Geteuid()).To(BeZero(), what+" drive real namespaces, mounts, veth and CRIU: run as root")
	bin := os.Getenv("FAULTWIN_REFSUP")
	if bin == "" {
		var err error
		bin, err = gexec.Build("faultwin/cmd/refsup")
		Expect(err).NotTo(HaveOccurred(), "building refsup")
	}
	GinkgoWriter.Printf("refsup: %s\n", bin)
	return []byte(bin)
}

// EnvOr returns the environment variable key, or def when it is unset.
func EnvOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
