package events

// Names the external tests use.
var (
	ErrJoined   = errJoined
	CausalChain = causalChain
)
