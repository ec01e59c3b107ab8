package review

// Names the external tests use.
const Format = reviewFormat
