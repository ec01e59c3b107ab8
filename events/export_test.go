package events

// Names the external tests use.
const (
	FieldAuditEventID = fieldAuditEventID
	FieldEmittedAt    = fieldEmittedAt
)

var (
	ErrJoined   = errJoined
	CausalChain = causalChain
)
