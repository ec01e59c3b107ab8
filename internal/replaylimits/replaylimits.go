// Package replaylimits holds the default bounds on reading a replay bundle,
// shared by package replay (the defaults of a zero replay.Options) and
// cmd/replay (the defaults of its flags).
package replaylimits

const (
	// MaxBufferedBlobs is the default of replay.Options.MaxBufferedBlobs.
	MaxBufferedBlobs = 128 << 20
	// MaxPayloadBytes is the default of replay.Options.MaxPayloadBytes.
	MaxPayloadBytes = 1 << 30
	// MaxLoadedBytes is the default of replay.Options.MaxLoadedBytes.
	MaxLoadedBytes = 64 << 20
)
