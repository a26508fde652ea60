// Package definitions loads window definitions: YAML files checked against
// the driver each names, expanded into model.Window instances. It has no
// host access beyond reading the definition files: a parsed window is
// identical on every machine, so a row can be re-judged anywhere.
//
// A definition is one YAML document (several may share a file, split by
// ---) in windows/*.yaml:
//
//	id: W3                          # family id: capitals and digits
//	driver: refsup                  # a registered driver; default refsup
//	operation: restore              # one of the driver's operations
//	point: restore.during_criu      # a point the driver publishes, passed by that operation
//	delays_ms: [30, 80, 150, 250]   # timed points only: one instance per delay
//	kill: supervisor                # or criu_first where CRIU runs; default supervisor
//	precondition: {cold: 1, restored: 0, checkpoint: true, display: false, fail_restore: false}
//	criteria: [-H1]                 # optional: the driver's criteria, changed by +X and -X, or a whole list with F1
//	labels: [timed]                 # optional extra selection labels
//	description: what the window proves, in one paragraph
//
// Required: id, operation, point, precondition, description.
// Unknown or repeated fields, aliases and values out of range are errors.
package definitions
