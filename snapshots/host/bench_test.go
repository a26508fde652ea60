package host

import (
	"context"
	"testing"

	"faultwin/snapshots"
)

// BenchmarkCapture measures one capture of this host with the refsup roots.
func BenchmarkCapture(b *testing.B) {
	needRoot(b)
	roots := snapshots.DefaultRoots("/var/lib/faultwin")
	ctx := context.Background()
	for b.Loop() {
		if _, err := Capture(ctx, "bench", roots, snapshots.Decoys{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaptureCleanRoot measures a capture whose state root holds no
// run: what a preflight on a clean host pays, whatever else runs here.
func BenchmarkCaptureCleanRoot(b *testing.B) {
	needRoot(b)
	roots := snapshots.DefaultRoots(b.TempDir())
	ctx := context.Background()
	for b.Loop() {
		if _, err := Capture(ctx, "bench", roots, snapshots.Decoys{}); err != nil {
			b.Fatal(err)
		}
	}
}
