package ledger

// Names the external tests use.
const (
	ActionRetain    = actionRetain
	KindAdmin       = kindAdmin
	KindReplay      = kindReplay
	MaxMessageBytes = maxMessageBytes
	MaxReported     = maxReported
	SchemaVersion   = schemaVersion
)

var (
	ErrBadRetention = errBadRetention
	ErrDamaged      = errDamaged
	ErrDiverged     = errDiverged
	ErrEmptyRange   = errEmptyRange
	ErrInvalidEntry = errInvalidEntry
	ErrTampered     = errTampered
)
