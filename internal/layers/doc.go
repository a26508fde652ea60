// Package layers holds the import rule of ARCHITECTURE.md as a test: which
// package of faultwin may import which. It has no code of its own.
package layers
