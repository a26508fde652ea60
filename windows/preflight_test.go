package windows_test

import (
	"fmt"
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"faultwin/criteria/matchers"
	"faultwin/internal/model"
)

// A window must never run on an unclean host: a process left by some other
// faultwin run makes it INVALID, with that very process as the evidence.
var _ = Describe("preflight", Serial, Label(model.DefaultDriver, "preflight"), func() {
	It("refuses a host with a leftover tagged process", func(ctx SpecContext) {
		w := registered[0]
		stray := exec.Command("/bin/sh", "-c", "read _", "faultwin-leftover", "--tag", model.Tag("leftover1"))
		stdin, err := stray.StdinPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(stray.Start()).To(Succeed())
		DeferCleanup(func() {
			_ = stdin.Close()
			_ = stray.Wait()
		})

		openRefsup()
		o, err := session.Run(ctx, w)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Verdict).To(matchers.HaveStatus(model.StatusInvalid))
		pre, ok := o.Verdict.Result(model.PRE)
		Expect(ok).To(BeTrue())
		Expect(pre.Holds()).To(BeFalse())
		Expect(strings.Join(pre.Evidence, "\n")).To(ContainSubstring(fmt.Sprintf("pid %d ", stray.Process.Pid)))
		Expect(o.Input.Scope.Run).To(BeEmpty(), "the supervisor must not even have been started")
	})
})
