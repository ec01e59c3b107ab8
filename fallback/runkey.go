package fallback

import (
	"strconv"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/llm"
	"github.com/codegenie/codegenie/prompt"
	"github.com/codegenie/codegenie/rag"
)

// CassetteIdentifier is implemented by an http.RoundTripper that replays
// (or records) a cassette. CassetteID returns the cassette's digest, the
// cassette_id of the run's pin. The cassettes package implements it; the
// pipeline only ever sees the interface.
type CassetteIdentifier interface {
	CassetteID() string
}

// RunKey pins a run: the four-tuple that must be held constant for
// byte-identical outcomes, plus ConfigDigest, the digest of every other
// input that can change the outcome (see Pin). It is computed before the
// run starts and recorded in the run.started event.
type RunKey struct {
	// CassetteID is the digest of the cassette the transport replays, or
	// "" when the tier's HTTP client has no cassette transport.
	CassetteID string `json:"cassette_id"`
	// StoreDigest is the solved-example store's order-independent digest.
	StoreDigest string `json:"store_digest"`
	// RepoSnapshotSHA is RepoContext.SnapshotSHA: a git tree hash.
	RepoSnapshotSHA string `json:"repo_snapshot_sha"`
	// EmbeddingModelDigest is the embedder's digest.
	EmbeddingModelDigest string `json:"embedding_model_digest"`
	// ConfigDigest is Pin.Digest of the tier's configuration.
	ConfigDigest string `json:"config_digest"`
}

// Digest returns blake3-256 of the canonical JSON encoding (events.Canonical)
// of the key's five fields, named as in their json tags. It depends only on
// the field values: equal keys have equal digests however they were built,
// and a change to any field changes it.
func (k RunKey) Digest() events.Digest {
	b, err := events.Canonical(k)
	if err != nil {
		// Unreachable: five strings always encode.
		panic("fallback: run key encoding: " + err.Error())
	}
	return events.Sum(b)
}

// String returns the digest as 64 lowercase hex digits: the name under
// which goldens and bundles are stored for this key.
func (k RunKey) String() string { return k.Digest().String() }

// Pin is every input besides the four-tuple that can change a run's
// outcome, with defaults resolved, so that a zero field and its explicit
// default pin the same way. Its Digest is RunKey.ConfigDigest.
type Pin struct {
	// TemplateVersion is prompt.TemplateVersion.
	TemplateVersion string `json:"template_version"`
	// TransformVersion is the canonical diff format, TransformVersion.
	TransformVersion string `json:"transform_version"`
	// ThresholdLow and ThresholdHigh are the band thresholds, formatted with
	// strconv.FormatFloat(x, 'g', -1, 64) so that even invalid values (NaN)
	// can be pinned and reported.
	ThresholdLow  string `json:"threshold_low"`
	ThresholdHigh string `json:"threshold_high"`
	// K is the number of examples retrieved.
	K int `json:"k"`
	// MaxFileBytes and MaxTotalBytes are the prompt's size limits.
	MaxFileBytes  int `json:"max_file_bytes"`
	MaxTotalBytes int `json:"max_total_bytes"`
	// Model is the adapter's pinned model name (also in Adapter).
	Model string `json:"model"`
	// Adapter is the adapter's Settings.
	Adapter llm.Settings `json:"adapter"`
}

// Digest returns blake3-256 of the canonical JSON encoding of p.
func (p Pin) Digest() (events.Digest, error) {
	b, err := events.Canonical(p)
	if err != nil {
		return events.Digest{}, err
	}
	return events.Sum(b), nil
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// pinFor resolves the tier's defaults into a Pin. settings is the
// adapter's Settings (zero when there is no adapter).
func (t *Tier) pinFor(settings llm.Settings) Pin {
	th := t.thresholds()
	lim := t.limits()
	return Pin{
		TemplateVersion:  prompt.TemplateVersion,
		TransformVersion: TransformVersion,
		ThresholdLow:     formatFloat(th.Low),
		ThresholdHigh:    formatFloat(th.High),
		K:                t.k(),
		MaxFileBytes:     lim.MaxFileBytes,
		MaxTotalBytes:    lim.MaxTotalBytes,
		Model:            settings.Model,
		Adapter:          settings,
	}
}

// thresholds returns t.Thresholds, or the default thresholds for the zero
// value.
func (t *Tier) thresholds() rag.Thresholds {
	if t.Thresholds == (rag.Thresholds{}) {
		return rag.Thresholds{Low: DefaultThresholdLow, High: DefaultThresholdHigh}
	}
	return t.Thresholds
}

// k returns t.K, or rag.DefaultK for zero.
func (t *Tier) k() int {
	if t.K == 0 {
		return rag.DefaultK
	}
	return t.K
}

// limits returns t.Limits with the prompt package's defaults filled in.
func (t *Tier) limits() prompt.Limits {
	l := t.Limits
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = prompt.DefaultMaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = prompt.DefaultMaxTotalBytes
	}
	return l
}
