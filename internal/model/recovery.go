package model

import "time"

// Recovery operations: captures a restarted supervisor must settle.
const (
	OpHibernate = "hibernate"
	OpSave      = "save"
)

// IsRecovery reports whether op is a capture whose windows restart the
// supervisor and judge its settle (R1..R4).
func IsRecovery(op string) bool { return op == OpHibernate || op == OpSave }

// Identity is what proves a session is the one it was: its init, the
// marker in the init's environment and in what the payload writes from
// memory, the payload's boot nonce (drawn once when it starts, so a cold
// start changes it) and its in-memory counter, read twice to show it runs.
type Identity struct {
	Session       string `json:"session"`
	State         string `json:"state,omitempty"` // the supervisor's record
	Init          PID    `json:"init"`
	InitAlive     bool   `json:"init_alive"` // the recorded init runs (pid and start time match)
	Marker        string `json:"marker,omitempty"`
	CounterMarker string `json:"counter_marker,omitempty"`
	Boot          string `json:"boot,omitempty"`
	Counter       int    `json:"counter"`
	Counter2      int    `json:"counter2"` // read again a moment later
	// WaitedMS is how long the second read was awaited: until the counter
	// moved, up to a bound (rows before it read again a fixed 300 ms later).
	WaitedMS float64   `json:"waited_ms,omitempty"`
	Taken    time.Time `json:"taken"`
	Err      string    `json:"err,omitempty"`
}

// Intent is a capture intent as the supervisor's ledger holds it.
type Intent struct {
	Session string    `json:"session"`
	Verb    string    `json:"verb"`
	Images  string    `json:"images,omitempty"`
	Started time.Time `json:"started"`
	CRIU    PID       `json:"criu,omitempty"` // the capture's CRIU call, when recorded
}

// Call is one call made to the restarted supervisor while it settles.
type Call struct {
	Session  string    `json:"session"`
	Role     string    `json:"role"` // "settling" or "other"
	Sent     time.Time `json:"sent"`
	Answered time.Time `json:"answered"`
	Err      string    `json:"err,omitempty"`
}

// ReuseProbe is R1's evidence: after the settle and the sweeps, a fresh run
// on the same state root creates, checkpoints and restores a session, and
// its own sweep then leaves nothing.
type ReuseProbe struct {
	Run        string      `json:"run"`
	Display    bool        `json:"display,omitempty"` // the fresh session took a display
	Steps      []string    `json:"steps"`             // each step done, in order
	Err        string      `json:"err,omitempty"`
	Restored   Identity    `json:"restored"` // the clone restored from the probe's checkpoint
	Checkpoint int         `json:"checkpoint_counter"`
	Sweep      SweepReport `json:"sweep"`
}

// Recovery is what a recovery window records after the first death: the
// identity of the session the capture was of before the trigger and after
// the settle, the intents at each death and after, the trace of every
// restarted supervisor, the calls made during the settle and R1's probe.
type Recovery struct {
	Session      string       `json:"session"` // the captured session
	Other        string       `json:"other"`   // another live session: it must not wait
	Before       Identity     `json:"before"`
	AtDeath      []Intent     `json:"at_death"`
	SecondDeath  *Death       `json:"second_death,omitempty"`
	AtSecond     []Intent     `json:"at_second_death,omitempty"`
	Restarts     int          `json:"restarts"`
	Trace        []TracePoint `json:"trace"` // lines the restarted supervisors appended
	Released     *time.Time   `json:"criu_released,omitempty"`
	Calls        []Call       `json:"calls"`
	After        Identity     `json:"after"`
	IntentsAfter []Intent     `json:"intents_after"`
	Probe        ReuseProbe   `json:"probe"`
	Err          string       `json:"err,omitempty"`
}
