package gate

// Names the external tests use.
var (
	ErrBadResult       = errBadResult
	ErrConflict        = errConflict
	ErrMissingScenario = errMissingScenario
	ReadResult         = readResult
)

// RecordFlag is the cassettes' record flag as this package knows it.
const RecordFlag = recordFlag
