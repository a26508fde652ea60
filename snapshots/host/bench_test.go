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
