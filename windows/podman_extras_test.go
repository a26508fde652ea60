package windows_test

import (
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"faultwin/internal/model"
	"faultwin/windows/suite"
)

// F1 holds an external kill to the phase its window names. PR1 at 50 ms
// kills podman while it prepares the restore, long before the CRIU that
// restores exists; the same window required to land there is INVALID and
// says where it landed. The row is not recorded: the window is not a
// registered one.
func init() {
	suite.Extras["podman"] = func(s *suite.Described) {
		It("refuses a kill that landed outside the phase its window names", Label("landing", "restore"), SpecTimeout(suite.WindowTimeout), func(ctx SpecContext) {
			i := slices.IndexFunc(s.Registered, func(w model.Window) bool { return w.ID == "PR1_50" })
			Expect(i).To(BeNumerically(">=", 0), "PR1_50 is registered")
			w := s.Registered[i]
			w.ID, w.Fault.LandsIn = "PR1_50_AIMED", "criu_restoring"
			s.Open()
			o, err := s.Session.Run(ctx, w)
			Expect(err).NotTo(HaveOccurred())
			f1, ok := o.Verdict.Result(model.F1)
			Expect(ok).To(BeTrue())
			Expect(f1.Holds()).To(BeFalse(), "F1 evidence: %q", f1.Evidence)
			Expect(f1.Evidence).To(ContainElement(ContainSubstring("the window must land in criu_restoring")))
			Expect(o.Verdict.Status).To(Equal(model.StatusInvalid))
			Expect(o.Input.Death.Landing).NotTo(BeNil())
			Expect(o.Input.Death.Landing.Phase).NotTo(Equal("criu_restoring"))
		})
	}
}
