package harness

// Names the external tests use.
const (
	DefaultMaxProcs         = defaultMaxProcs
	DefaultProcesses        = defaultProcesses
	ErrorKindCassetteUnused = errorKindCassetteUnused
	ErrorKindPanic          = errorKindPanic
	ErrorKindPin            = errorKindPin
)

var (
	ErrBelowFloor    = errBelowFloor
	ErrInvalidConfig = errInvalidConfig
	ErrLeak          = errLeak
	ErrRunFailed     = errRunFailed
	ReproCommand     = defaultReproCommand
)
