package definitions

// Definition is one window definition as its YAML is written: the type
// the JSON Schema of window files is generated from (scripts/schemas), so
// an editor can help before faultwin lint says more. The loader itself
// reads the YAML node by node, to give every problem with its line; a test
// holds this type's fields to the loader's.
type Definition struct {
	ID        string `json:"id" jsonschema:"pattern=^[A-Z][A-Z0-9]*$,description=the family's id (an instance of a timed family is ID_<delay>)"`
	Driver    string `json:"driver,omitempty" jsonschema:"description=the supervisor: refsup (the default) or a described one's name"`
	Operation string `json:"operation" jsonschema:"description=the operation the supervisor is killed in"`
	Point     string `json:"point" jsonschema:"description=the point the kill is armed at: one the driver publishes for the operation"`
	DelaysMS  []int  `json:"delays_ms,omitempty" jsonschema:"minItems=1,uniqueItems=true,description=for a timed point: the delays in ms (one instance each)"`
	Kill      string `json:"kill,omitempty" jsonschema:"enum=supervisor,enum=criu_first,enum=criu_held,description=what is killed (refsup's points)"`
	// LandsIn is one phase, or a phase per delay ({30: prepare}).
	LandsIn     LandsIn   `json:"lands_in,omitempty" jsonschema:"description=the phase of the operation the kill must land in (external points) or one per delay"`
	SecondDeath string    `json:"second_death,omitempty" jsonschema:"description=a recovery window's second death: the settle point of the restarted supervisor"`
	Pre         PreFields `json:"precondition" jsonschema:"description=what is made before the trigger"`
	Criteria    []string  `json:"criteria,omitempty" jsonschema:"minItems=1,uniqueItems=true,description=the criteria judged: absent for the supervisor's own (with R1..R4 for hibernate and save); +X and -X change them; or the whole list (F1 among them)"`
	Labels      []string  `json:"labels,omitempty" jsonschema:"uniqueItems=true"`
	Description string    `json:"description" jsonschema:"description=what the window shows"`
}

// LandsIn is a phase, or a mapping of delays to phases.
type LandsIn struct{}

// PreFields is a definition's precondition as written.
type PreFields struct {
	Cold        int    `json:"cold,omitempty" jsonschema:"minimum=0"`
	Restored    int    `json:"restored,omitempty" jsonschema:"minimum=0"`
	Checkpoint  bool   `json:"checkpoint,omitempty"`
	Display     bool   `json:"display,omitempty"`
	FailRestore bool   `json:"fail_restore,omitempty"`
	NetworkLock string `json:"network_lock,omitempty"`
}
