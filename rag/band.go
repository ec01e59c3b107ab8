package rag

import (
	"errors"
	"fmt"
	"math"
)

// Band is the confidence band of a retrieval score.
type Band int

// The bands, from least to most confident.
const (
	Reject     Band = iota // score < Low: the example is not shown
	Borderline             // Low <= score < High: shown, marked borderline
	Accept                 // score >= High: shown as a close match
)

// ErrBadThresholds reports thresholds that are not 0 <= Low <= High <= 1
// (NaN included).
var ErrBadThresholds = errors.New("bad band thresholds")

// ErrBadScore reports a NaN score given to Classify.
var ErrBadScore = errors.New("bad score")

// ErrBadBand reports a band name or value that is not one of the three.
var ErrBadBand = errors.New("bad band")

var bandNames = [...]string{Reject: "reject", Borderline: "borderline", Accept: "accept"}

// String returns "reject", "borderline" or "accept", and "band(N)" for any
// other value.
func (b Band) String() string {
	if b >= 0 && int(b) < len(bandNames) {
		return bandNames[b]
	}
	return fmt.Sprintf("band(%d)", int(b))
}

// MarshalText returns the band's name; values outside the three bands are
// an error wrapping ErrBadBand.
func (b Band) MarshalText() ([]byte, error) {
	if b < 0 || int(b) >= len(bandNames) {
		return nil, fmt.Errorf("rag: %v: %w", b, ErrBadBand)
	}
	return []byte(bandNames[b]), nil
}

// UnmarshalText parses "reject", "borderline" or "accept".
func (b *Band) UnmarshalText(text []byte) error {
	p, err := ParseBand(string(text))
	if err != nil {
		return err
	}
	*b = p
	return nil
}

// ParseBand parses a band name as String writes it.
func ParseBand(s string) (Band, error) {
	for i, n := range bandNames {
		if s == n {
			return Band(i), nil
		}
	}
	return 0, fmt.Errorf("rag: band %q: %w: use reject, borderline or accept", s, ErrBadBand)
}

// Thresholds are the two band boundaries. Both are inclusive lower bounds:
// Low is the least Borderline score, High the least Accept score.
type Thresholds struct {
	Low, High float64
}

// Validate reports an error wrapping ErrBadThresholds unless
// 0 <= Low <= High <= 1. NaN fails every comparison and is rejected.
func (t Thresholds) Validate() error {
	if !(0 <= t.Low && t.Low <= t.High && t.High <= 1) {
		return fmt.Errorf("rag: thresholds low=%v high=%v: %w: need 0 <= low <= high <= 1, neither NaN",
			t.Low, t.High, ErrBadThresholds)
	}
	return nil
}

// Classify maps score to a band. It is a pure function of its arguments:
//
//	score <  t.Low            -> Reject
//	t.Low <= score < t.High   -> Borderline
//	score >= t.High           -> Accept
//
// so a score equal to a threshold lands in the higher band, and Low == High
// leaves no Borderline scores. Scores outside [0, 1] are allowed (a cosine
// can be negative). Invalid thresholds give ErrBadThresholds and a NaN
// score gives ErrBadScore; the band returned with an error is Reject.
func Classify(score float64, t Thresholds) (Band, error) {
	if err := t.Validate(); err != nil {
		return Reject, err
	}
	if math.IsNaN(score) {
		return Reject, fmt.Errorf("rag: classify: score is NaN: %w: the embedder or retriever produced an invalid similarity", ErrBadScore)
	}
	switch {
	case score >= t.High:
		return Accept, nil
	case score >= t.Low:
		return Borderline, nil
	default:
		return Reject, nil
	}
}
