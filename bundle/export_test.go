package bundle

// Names the external tests use.
var (
	CompareRuns  = compareRuns
	ErrTooLarge  = errTooLarge
	ErrTruncated = errTruncated
	MergeTapes   = mergeTapes
)
