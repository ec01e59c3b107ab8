package cassettes

// Names the external tests use.
var (
	ErrDigestMismatch  = errDigestMismatch
	ErrInvalidCassette = errInvalidCassette
	FormatAge          = formatAge
	ParseAge           = parseAge
)
