// Package criteria judges one fault window from plain data: the window's
// definition, the run's scope, the snapshots taken around the supervisor's
// death and the sweep reports. It does no I/O, so a stored row can be judged
// again anywhere, without root, and must come out byte-identical.
//
// Every criterion returns a Result with evidence lines a reviewer can check
// against the stored snapshots. A criterion that cannot see everything it
// needs says so (Judged false) instead of passing on missing evidence; the
// window is then INVALID, never PASS.
package criteria
