package fallback

import (
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/llm"
	"github.com/codegenie/codegenie/prompt"
	"github.com/codegenie/codegenie/rag"
)

// failedPayload is the payload of transform.failed.
type failedPayload struct {
	Step    string `json:"step"`    // the step that failed (see RunError.Step)
	Kind    string `json:"kind"`    // error class, see errorKind
	Reason  string `json:"reason"`  // UnusableCompletionError.Reason, or ""
	Path    string `json:"path"`    // the file concerned, or ""
	Error   string `json:"error"`   // the error message
	Excerpt string `json:"excerpt"` // bounded excerpt of the offending text, or ""
}

// Payloads of the step events.
type (
	runStartedPayload struct {
		Path          string `json:"path"`
		RunKey        RunKey `json:"run_key"`
		RunKeyDigest  string `json:"run_key_digest"`
		Pin           Pin    `json:"pin"`
		AdvisoryID    string `json:"advisory_id"`
		Files         int    `json:"files"`
		PriorAttempts int    `json:"prior_attempts"`
	}
	retrievalQueriedPayload struct {
		Query                string `json:"query"`
		QueryDigest          string `json:"query_digest"`
		K                    int    `json:"k"`
		StoreSize            int    `json:"store_size"`
		EmbeddingModelDigest string `json:"embedding_model_digest"`
	}
	rankedExample struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
	}
	retrievalRankedPayload struct {
		Results []rankedExample `json:"results"`
	}
	classifiedExample struct {
		ID    string   `json:"id"`
		Score float64  `json:"score"`
		Band  rag.Band `json:"band"`
	}
	bandClassifiedPayload struct {
		ThresholdLow  float64             `json:"threshold_low"`
		ThresholdHigh float64             `json:"threshold_high"`
		Examples      []classifiedExample `json:"examples"`
		TopBand       rag.Band            `json:"top_band"`
		Shown         int                 `json:"shown"`
	}
	promptBuiltPayload struct {
		TemplateVersion string `json:"template_version"`
		PromptDigest    string `json:"prompt_digest"`
		SystemBytes     int    `json:"system_bytes"`
		UserBytes       int    `json:"user_bytes"`
		Examples        int    `json:"examples"`
		Attempts        int    `json:"attempts"`
		System          string `json:"system"`
		User            string `json:"user"`
	}
	llmRequestedPayload struct {
		Settings      llm.Settings `json:"settings"`
		RequestDigest string       `json:"request_digest"`
	}
	llmRespondedPayload struct {
		Text         string `json:"text"`
		TextDigest   string `json:"text_digest"`
		Model        string `json:"model"`
		StopReason   string `json:"stop_reason"`
		ID           string `json:"id"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
	}
	transformProducedPayload struct {
		Diff       string   `json:"diff"`
		DiffDigest string   `json:"diff_digest"`
		DiffBytes  int      `json:"diff_bytes"`
		Files      []string `json:"files"`
	}
)

// PromptDigest is the digest recorded in prompt.built: blake3-256 of the
// canonical JSON object {"prompt": User, "system": System} (an llm.Request).
func PromptDigest(p prompt.Prompt) events.Digest {
	b, err := events.Canonical(llm.Request{System: p.System, Prompt: p.User})
	if err != nil {
		// Unreachable: two strings always encode.
		return events.Digest{}
	}
	return events.Sum(b)
}
