package cassettes

// Names the external tests use.
const FrameOffsetsHeader = frameOffsetsHeader

var (
	ErrDigestMismatch  = errDigestMismatch
	ErrInvalidCassette = errInvalidCassette
)
