package model

import (
	"syscall"
	"testing"
)

func TestSignalName(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.Signal(77): "signal 77"} {
		if got := SignalName(sig); got != want {
			t.Errorf("SignalName(%d) = %q, want %q", sig, got, want)
		}
	}
}
