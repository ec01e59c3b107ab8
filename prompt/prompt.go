package prompt

// TemplateVersion names the prompt format. It is part of the run's pin
// (RunKey): bump it on any change that alters the bytes Build produces for
// some input, including the System text.
const TemplateVersion = "codegenie-prompt/v1"

// Default limits, used when a Limits field is zero or negative.
const (
	DefaultMaxFileBytes  = 64 << 10  // 64 KiB per file
	DefaultMaxTotalBytes = 256 << 10 // 256 KiB over all files
)

// ScoreDecimals is the number of decimals an example Score is rounded to
// before it is ranked and rendered.
const ScoreDecimals = 4

// MaxScore bounds the magnitude of an example Score; larger values, NaN and
// infinities are rejected with ErrInvalidScore. (Similarity scores lie in
// [-1, 1]; the bound keeps the fixed-decimal rendering exact.)
const MaxScore = 1e6

// Input is everything a prompt is built from. Build's output depends on
// nothing else.
type Input struct {
	Advisory Advisory
	Files    []File           // any order; rendered sorted by Path
	Examples []Example        // any order; rendered in rank order
	Recipe   RecipeSelection  // Params rendered sorted by key
	Attempts []AttemptSummary // any order; rendered sorted by Attempt (retry path when non-empty)
}

// Limits caps the repository files shown to the model. The zero value is
// usable: a field that is zero or negative takes its default.
type Limits struct {
	MaxFileBytes  int // per file, on the raw Content bytes; default DefaultMaxFileBytes
	MaxTotalBytes int // sum of all files' raw Content bytes; default DefaultMaxTotalBytes
}

func (l Limits) maxFile() int {
	if l.MaxFileBytes <= 0 {
		return DefaultMaxFileBytes
	}
	return l.MaxFileBytes
}

func (l Limits) maxTotal() int {
	if l.MaxTotalBytes <= 0 {
		return DefaultMaxTotalBytes
	}
	return l.MaxTotalBytes
}

// Builder renders prompts. The zero value is ready to use.
type Builder struct {
	Limits Limits
}

// Prompt is what an llm adapter sends: a system prompt and one user message.
type Prompt struct {
	System string // constant for a TemplateVersion: the task and the answer format
	User   string // the rendered Input (see the package doc, "User text")
}

// Canonical validates in and returns the form Build renders: files sorted by
// path, examples in rank order with scores rounded to ScoreDecimals, attempts
// sorted, and empty slices, maps and contents as nil. Content byte slices are
// shared with in, not copied. Canonical returns the same errors as Build,
// and two inputs with one canonical form build the same Prompt.
func (b Builder) Canonical(in Input) (Input, error) {
	return canonical(b.Limits, in)
}

// Build validates in and renders it. The result depends only on in and
// b.Limits (which only decide whether in is accepted): the order of Files,
// Examples, Attempts and of Params map insertion does not matter. Bad input
// gives an *InputError wrapping one of the sentinels.
func (b Builder) Build(in Input) (Prompt, error) {
	c, err := canonical(b.Limits, in)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{System: systemText, User: render(c)}, nil
}
