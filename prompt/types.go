package prompt

// Advisory is the security advisory the run fixes.
type Advisory struct {
	ID              string // e.g. "GHSA-35jh-r3h4-6jhm"
	Summary         string
	Details         string
	Ecosystem       string // "npm", "Go", "PyPI"
	Package         string // the vulnerable package
	VulnerableRange string // e.g. "< 4.17.21"
	FixedVersion    string // e.g. "4.17.21"
}

// File is one repository file shown to the model.
type File struct {
	Path    string // slash-separated, relative to the repo root
	Content []byte
}

// RecipeSelection is the recipe the planner chose for this advisory.
// Params is unordered; the builder renders it sorted by key.
type RecipeSelection struct {
	Recipe string
	Params map[string]string
}

// AttemptSummary describes an earlier attempt at the same advisory: the
// retry-bypass path puts these into the prompt.
type AttemptSummary struct {
	Attempt int    // 1-based
	Recipe  string // the recipe that was tried
	Outcome string // e.g. "build-failed", "tests-failed"
	Error   string // bounded excerpt of the failure
}

// Example is a ranked solved example shown to the model.
type Example struct {
	ID        string
	Ecosystem string
	Package   string
	Advisory  string // advisory text of the solved example
	Fix       string // the fix, as a unified diff
	Score     float64
	Band      string // "accept" or "borderline"
}
