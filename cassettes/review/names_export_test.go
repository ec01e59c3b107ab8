package review

// Names the external tests use.
const Format = reviewFormat

// ErrInvalidPrices is wrapped by every error about a price table.
var ErrInvalidPrices = errInvalidPrices
