package ledger

import "github.com/codegenie/codegenie/gate"

// Names the external tests use.
const (
	ActionRetain    = actionRetain
	KindAdmin       = kindAdmin
	KindRerun       = kindRerun
	KindVerdict     = kindVerdict
	MaxMessageBytes = maxMessageBytes
	MaxReported     = maxReported
	SchemaVersion   = schemaVersion

	Pass             = gate.Pass
	Nondeterministic = gate.Nondeterministic
	Broken           = gate.Broken

	StatusSame          = statusSame
	StatusDiverged      = statusDiverged
	StatusNotComparable = statusNotComparable
	StatusError         = statusError
)

// VisitStrings calls fn with every string reachable from a value.
var VisitStrings = visit

var (
	ErrBadRetention = errBadRetention
	ErrDamaged      = errDamaged
	ErrDiverged     = errDiverged
	ErrEmptyRange   = errEmptyRange
	ErrInvalidEntry = errInvalidEntry
	ErrTampered     = errTampered
)
