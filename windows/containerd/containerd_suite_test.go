package containerd_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"faultwin/windows/suite"
)

// The containerd windows: registered YAML in this directory, run against a
// real containerd (a daemon of its own per run), its runc v2 shim, runc and
// CRIU (see suite.Described).
var s *suite.Described

func TestContainerd(t *testing.T) {
	RegisterFailHandler(Fail)
	s = suite.LoadDescribed(t, "containerd")
	RunSpecs(t, "faultwin containerd windows")
}

var _ = BeforeSuite(func() { s.Open() })

var _ = Describe("containerd windows", Serial, func() { s.Specs() })
