package definitions

// Delay bounds, in milliseconds after CRIU starts.
const (
	MinDelayMS = 1
	MaxDelayMS = 10000
)
