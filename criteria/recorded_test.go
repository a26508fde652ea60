package criteria_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	. "faultwin/criteria/matchers"
	"faultwin/internal/model"
)

// load reads a recorded Input from testdata.
func load(t *testing.T, name string) criteria.Input {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var in criteria.Input
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return in
}

// TestRecorded judges each recorded window and checks its status, exactly
// which criteria are false and the evidence a reviewer would look for.
func TestRecorded(t *testing.T) {
	cases := []struct {
		file     string
		status   string
		fail     []string            // exactly these are judged false (FAIL rows)
		evidence map[string][]string // id -> substrings some evidence line holds
		reason   string
	}{
		{
			file:   "w4_30_pass",
			status: model.StatusPass,
			reason: "all 10 criteria hold",
		},
		{
			// Run 1's first real failure: CRIU's forked restorer survived.
			file:   "w4_30_criu_restorer_survived",
			status: model.StatusFail,
			fail:   []string{model.P1},
			evidence: map[string][]string{model.P1: {
				`pid 4242 (start 1190518) criu argv="criu swrk 3" cwd=/var/lib/faultwin/r1/checkpoints/c1: env tag, cwd under state dir`,
				"comm criu (in after_sweep, after_sweep2)",
			}},
			reason: "P1 false",
		},
		{
			file:   "r10_decoy_killed",
			status: model.StatusFail,
			fail:   []string{model.P5},
			evidence: map[string][]string{model.P5: {
				"decoy pid 3907 (start 1182044) faultwin:r10 gone",
				"decoy mount /var/lib/faultwin/r10/mnt gone",
				"first sweep killed decoy pid 3907 (start 1182044) sh: argv tag faultwin:r10 has prefix faultwin:r1",
				"first sweep unmounted decoy mount /var/lib/faultwin/r10/mnt",
			}},
		},
		{
			// Run 2: a leftover restorer of run 1 on the host.
			file:   "preflight_leftover_restorer",
			status: model.StatusInvalid,
			fail:   []string{model.PRE, model.F1},
			evidence: map[string][]string{model.PRE: {
				`pid 4242 (start 1190518) criu argv="criu swrk 3" cwd=/var/lib/faultwin/r1/checkpoints/c1: env tag r1, comm criu, cwd under state root`,
				"link dvh2 (veth)",
			}},
			reason: "preflight: 2 leftovers of a faultwin run at preflight",
		},
		{
			file:   "w3_250_fault_not_fired",
			status: model.StatusInvalid,
			fail:   []string{model.F1},
			evidence: map[string][]string{model.F1: {
				"armed point restore.during_criu never fired (8 trace points, last point passed restore.after_ready)",
				`supervisor died of signal "terminated", not SIGKILL`,
			}},
			reason: "F1: fault did not land as armed at restore.during_criu",
		},
		{
			file:     "w5_ip_forward_left_on",
			status:   model.StatusFail,
			fail:     []string{model.H1},
			evidence: map[string][]string{model.H1: {"sysctl net/ipv4/ip_forward = 1 after the sweeps, 0 at preflight"}},
		},
		{
			file:   "w16_second_sweep_not_empty",
			status: model.StatusFail,
			fail:   []string{model.P6},
			evidence: map[string][]string{model.P6: {
				"second sweep restored sysctl net/ipv4/ip_forward",
				"gone between sweeps: sysctl net/ipv4/ip_forward=1",
				"appeared between sweeps: sysctl net/ipv4/ip_forward=0",
			}},
		},
		{
			file:   "w13_nft_tables_left",
			status: model.StatusFail,
			fail:   []string{model.P3},
			evidence: map[string][]string{model.P3: {
				"table ip faultwin_r1 (in after_sweep, after_sweep2)",
				"table inet CRIU-4201 (in after_sweep, after_sweep2)",
			}},
		},
		{
			file:     "w14_ledger_left",
			status:   model.StatusFail,
			fail:     []string{model.P4},
			evidence: map[string][]string{model.P4: {"ledger /var/lib/faultwin/r1/ledger.json (file) (in after_sweep, after_sweep2)"}},
		},
		{
			file:   "w2_unledgered_overlay",
			status: model.StatusFail,
			fail:   []string{model.O1},
			evidence: map[string][]string{model.O1: {
				"mount /var/lib/faultwin/r1/sessions/s2/root (overlay) not in ledger",
			}},
		},
		{
			file:     "w2_decoys_not_counted",
			status:   model.StatusPass,
			evidence: map[string][]string{model.O1: {"1 decoy mount under the state dir not counted"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			g := NewWithT(t)
			v := criteria.Evaluate(load(t, tc.file))
			g.Expect(v).To(HaveStatus(tc.status))
			if tc.status == model.StatusPass {
				g.Expect(v).To(FailOnly())
			} else if tc.status == model.StatusFail {
				g.Expect(v).To(FailOnly(tc.fail...))
			} else {
				g.Expect(v).To(FailOn(tc.fail...))
			}
			for id, subs := range tc.evidence {
				r, ok := v.Result(id)
				g.Expect(ok).To(BeTrue(), "no result %s", id)
				for _, s := range subs {
					g.Expect(r).To(HaveEvidence(s))
				}
			}
			if tc.reason != "" {
				g.Expect(v.Reason).To(Equal(tc.reason))
			}
		})
	}
}

// TestRecordedDeterministic judges every recorded input twice, and once more
// after a JSON round trip (as replay does), and expects identical bytes.
func TestRecordedDeterministic(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f[:len(f)-len(".json")])
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			in := load(t, name)
			a, err := json.Marshal(criteria.Evaluate(in))
			g.Expect(err).NotTo(HaveOccurred())
			b, err := json.Marshal(criteria.Evaluate(in))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(b)).To(Equal(string(a)))

			stored, err := json.Marshal(in)
			g.Expect(err).NotTo(HaveOccurred())
			var replayed criteria.Input
			g.Expect(json.Unmarshal(stored, &replayed)).To(Succeed())
			c, err := json.Marshal(criteria.Evaluate(replayed))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(c)).To(Equal(string(a)))
		})
	}
}
