package model

// Criterion ids. PRE and F1 are gatekeepers: they are judged for every
// window, listed or not, because without them no other result means anything.
const (
	PRE = "PRE"
	F1  = "F1"
	P1  = "P1"
	P2  = "P2"
	P3  = "P3"
	P4  = "P4"
	P5  = "P5"
	P6  = "P6"
	// P7: the supervisor's own state of the run's workloads (Roots.State)
	// is gone after the sweeps.
	P7 = "P7"
	O1 = "O1"
	H1 = "H1"
	R1 = "R1"
	R2 = "R2"
	R3 = "R3"
	R4 = "R4"
	// What the death cost its user (Aftermath): the workload goes on, the
	// supervisor answers, and what it reports is what the host shows.
	U1 = "U1"
	U2 = "U2"
	U3 = "U3"
)

// CriterionIDs are the ids a window may list, in the order rows and windows
// list them. PRE is judged for every window and is not listed.
var CriterionIDs = []string{F1, O1, P1, P2, P3, P4, P5, P6, P7, H1, R1, R2, R3, R4, U1, U2, U3}

// Window statuses.
const (
	StatusPass    = "PASS"
	StatusFail    = "FAIL"
	StatusInvalid = "INVALID"
	StatusError   = "ERROR"
)

// Statuses lists the valid statuses, best first.
var Statuses = []string{StatusPass, StatusFail, StatusInvalid, StatusError}

// ValidStatus reports whether s is one of Statuses.
func ValidStatus(s string) bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}
