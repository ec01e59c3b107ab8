package harness

// Names the external tests use.
const (
	DefaultMaxProcs         = defaultMaxProcs
	DefaultProcesses        = defaultProcesses
	ErrorKindCassetteUnused = errorKindCassetteUnused
	ErrorKindPanic          = errorKindPanic
	ErrorKindPin            = errorKindPin
	PurposeReRecord         = purposeReRecord
	PurposeReproduce        = purposeReproduce
)

var (
	ShardOf = shardOf

	ErrBadResult       = errBadResult
	ErrBelowFloor      = errBelowFloor
	ErrConflict        = errConflict
	ErrInvalidConfig   = errInvalidConfig
	ErrLeak            = errLeak
	ErrMissingScenario = errMissingScenario
	ErrRunFailed       = errRunFailed
	ReadResult         = readResult
	ReproCommand       = defaultReproCommand
)
