package rag

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genThresholds draws valid thresholds, often with Low == High or on the
// ends of [0, 1].
func genThresholds() *rapid.Generator[Thresholds] {
	return rapid.Custom(func(t *rapid.T) Thresholds {
		edge := rapid.SampledFrom([]float64{0, 0.5, 1}).Draw(t, "edge")
		a := rapid.OneOf(rapid.Float64Range(0, 1), rapid.Just(edge)).Draw(t, "a")
		b := rapid.OneOf(rapid.Float64Range(0, 1), rapid.Just(a)).Draw(t, "b")
		return Thresholds{Low: min(a, b), High: max(a, b)}
	})
}

func genScore() *rapid.Generator[float64] {
	return rapid.Custom(func(t *rapid.T) float64 {
		return rapid.OneOf(rapid.Float64Range(-1, 1), rapid.Float64(), rapid.SampledFrom([]float64{0, 1, math.Inf(1), math.Inf(-1)})).Draw(t, "score")
	})
}

func TestClassifyMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		th := genThresholds().Draw(t, "thresholds")
		s1 := genScore().Draw(t, "s1")
		s2 := genScore().Draw(t, "s2")
		if s1 > s2 {
			s1, s2 = s2, s1
		}
		b1, err := Classify(s1, th)
		require.NoError(t, err)
		b2, err := Classify(s2, th)
		require.NoError(t, err)
		require.LessOrEqual(t, b1, b2, "a higher score got a lower band")
		// The rule in the documentation, restated.
		for _, c := range []struct {
			s float64
			b Band
		}{{s1, b1}, {s2, b2}} {
			switch {
			case c.s < th.Low:
				require.Equal(t, Reject, c.b)
			case c.s < th.High:
				require.Equal(t, Borderline, c.b)
			default:
				require.Equal(t, Accept, c.b)
			}
		}
	})
}

func TestClassifyPure(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		th := genThresholds().Draw(t, "thresholds")
		scores := rapid.SliceOfN(genScore(), 1, 20).Draw(t, "scores")
		first := make([]Band, len(scores))
		for i, s := range scores {
			b, err := Classify(s, th)
			require.NoError(t, err)
			first[i] = b
		}
		// Classifying in another order, interleaved with other calls, gives
		// the same bands: no hidden state.
		perm := rapid.Permutation(indices(len(scores))).Draw(t, "order")
		for _, i := range perm {
			_, _ = Classify(rapid.Float64().Draw(t, "noise"), genThresholds().Draw(t, "other"))
			b, err := Classify(scores[i], th)
			require.NoError(t, err)
			require.Equal(t, first[i], b)
		}
	})
}

func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestClassifyBoundaries(t *testing.T) {
	th := Thresholds{Low: 0.3, High: 0.7}
	tests := []struct {
		name  string
		score float64
		th    Thresholds
		want  Band
	}{
		{name: "below low", score: math.Nextafter(0.3, 0), th: th, want: Reject},
		{name: "at low", score: 0.3, th: th, want: Borderline},
		{name: "just below high", score: math.Nextafter(0.7, 0), th: th, want: Borderline},
		{name: "at high", score: 0.7, th: th, want: Accept},
		{name: "negative cosine", score: -0.5, th: th, want: Reject},
		{name: "above one", score: 1.5, th: th, want: Accept},
		{name: "low equals high: at", score: 0.5, th: Thresholds{0.5, 0.5}, want: Accept},
		{name: "low equals high: below", score: 0.49, th: Thresholds{0.5, 0.5}, want: Reject},
		{name: "all zero accepts zero", score: 0, th: Thresholds{}, want: Accept},
		{name: "all one: one accepted", score: 1, th: Thresholds{1, 1}, want: Accept},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Classify(tc.score, tc.th)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestThresholdsValidate(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		th   Thresholds
		ok   bool
	}{
		{name: "typical", th: Thresholds{0.3, 0.7}, ok: true},
		{name: "zero value", th: Thresholds{}, ok: true},
		{name: "equal", th: Thresholds{0.5, 0.5}, ok: true},
		{name: "full range", th: Thresholds{0, 1}, ok: true},
		{name: "low above high", th: Thresholds{0.8, 0.2}},
		{name: "negative low", th: Thresholds{-0.1, 0.5}},
		{name: "high above one", th: Thresholds{0.5, 1.01}},
		{name: "NaN low", th: Thresholds{nan, 0.5}},
		{name: "NaN high", th: Thresholds{0.5, nan}},
		{name: "both NaN", th: Thresholds{nan, nan}},
		{name: "infinite high", th: Thresholds{0, math.Inf(1)}},
		{name: "negative infinite low", th: Thresholds{math.Inf(-1), 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.th.Validate()
			band, cerr := Classify(0.5, tc.th)
			if tc.ok {
				require.NoError(t, err)
				require.NoError(t, cerr)
				return
			}
			require.ErrorIs(t, err, ErrBadThresholds)
			require.Contains(t, err.Error(), "0 <= low <= high <= 1")
			require.ErrorIs(t, cerr, ErrBadThresholds)
			require.Equal(t, Reject, band)
		})
	}
}

func TestClassifyNaNScore(t *testing.T) {
	b, err := Classify(math.NaN(), Thresholds{0.3, 0.7})
	require.ErrorIs(t, err, ErrBadScore)
	require.Equal(t, Reject, b)
}

func TestBandText(t *testing.T) {
	for _, b := range []Band{Reject, Borderline, Accept} {
		text, err := b.MarshalText()
		require.NoError(t, err)
		require.Equal(t, b.String(), string(text))
		var back Band
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, b, back)
	}
	require.Equal(t, []string{"reject", "borderline", "accept"}, []string{Reject.String(), Borderline.String(), Accept.String()})
	require.Equal(t, "band(7)", Band(7).String())
	_, err := Band(-1).MarshalText()
	require.ErrorIs(t, err, ErrBadBand)
	_, err = ParseBand("Accept")
	require.ErrorIs(t, err, ErrBadBand)
}
