// Package model is faultwin's shared vocabulary: what a run owns and how its
// resources are named, a window and its fault, what a supervisor reports of
// its death and its sweep, criterion ids and statuses, and the one rule for
// path containment. Every other package of the harness imports it; it
// imports nothing of the project, so the criteria, the row store and the
// drivers agree on one definition of each word.
package model
