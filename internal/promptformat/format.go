package promptformat

// Section headings and the fixed instruction line under some of them. A
// counted heading (HFiles, HExamples, HAttempts) is followed by " (N)".
const (
	HTask        = "# Task"
	TaskLine     = "Fix the security advisory below in the repository files shown. Answer with one unified diff in a ```diff block, as the system prompt describes."
	HAdvisory    = "# Advisory"
	HSummary     = "## Summary"
	HDetails     = "## Details"
	HRecipe      = "# Recipe"
	HFiles       = "# Repository files"
	HExamples    = "# Solved examples"
	ExamplesLine = "Earlier fixes of similar advisories, best match first. Use them as guidance; the files above are what you edit."
	HAttempts    = "# Previous attempts"
	AttemptsLine = "These attempts at this advisory already failed. Do not repeat them: make a different change that avoids each failure."
	HAnswer      = "# Answer"
	AnswerLine   = "Reply with exactly one ```diff fenced block holding a unified diff against the files above, with a/ and b/ path prefixes. Nothing else in the reply is read."
)

// Item headings. HFile is followed by the quoted path, HExample by the
// 1-based rank, HAttempt by the attempt number.
const (
	HFile            = "## File "
	HExample         = "## Example "
	HExampleAdvisory = "### Advisory"
	HExampleFix      = "### Fix"
	HAttempt         = "## Attempt "
	HAttemptError    = "### Error"
)

// Field lines. A field is written "- NAME: " followed by the quoted value;
// a recipe parameter is ParamPrefix, the quoted key, ": " and the quoted
// value; ScorePrefix is followed by the score with four decimals.
const (
	FieldID              = "id"
	FieldEcosystem       = "ecosystem"
	FieldPackage         = "package"
	FieldVulnerableRange = "vulnerable range"
	FieldFixedVersion    = "fixed version"
	FieldRecipe          = "recipe"
	FieldBand            = "band"
	FieldOutcome         = "outcome"
	ParamPrefix          = "- param "
	ScorePrefix          = "- score: "
)

// Block info strings: FENCE LANG " " BytesPrefix N [" " NoEOL].
const (
	LangText    = "text"
	LangDiff    = "diff"
	LangBase64  = "base64"
	BytesPrefix = "bytes="
	NoEOL       = "noeol"
)
