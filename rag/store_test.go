package rag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codegenie/codegenie/events"
	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestStoreDigestIgnoresInsertionOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		exs := genExampleSet(0, 12).Draw(t, "examples")
		perm := rapid.Permutation(exs).Draw(t, "permutation")
		// Re-add some examples (identical bytes) at random positions.
		dups := rapid.SliceOfN(rapid.IntRange(0, max(len(exs)-1, 0)), 0, len(exs)).Draw(t, "duplicates")
		withDups := slices.Clone(perm)
		for i, d := range dups {
			if len(exs) == 0 {
				break
			}
			at := rapid.IntRange(0, len(withDups)).Draw(t, fmt.Sprintf("dup-position-%d", i))
			withDups = slices.Insert(withDups, at, exs[d])
		}

		a := mustStore(t, exs...)
		b := mustStore(t, withDups...)
		require.Equal(t, a.Digest(), b.Digest(), "digest depends on insertion order or duplicates")
		require.Equal(t, len(exs), b.Len())
		if diff := pretty.Diff(a.Examples(), b.Examples()); len(diff) > 0 {
			t.Fatalf("examples differ:\n%s", strings.Join(diff, "\n"))
		}
	})
}

func TestStoreDigestSensitiveToEveryField(t *testing.T) {
	base := Example{ID: "a", Advisory: "adv", Ecosystem: "npm", Package: "p", Fix: "fix"}
	mutations := []struct {
		name string
		mut  func(*Example)
	}{
		{"ID", func(e *Example) { e.ID = "b" }},
		{"Advisory", func(e *Example) { e.Advisory += "x" }},
		{"Ecosystem", func(e *Example) { e.Ecosystem = "Go" }},
		{"Package", func(e *Example) { e.Package = "q" }},
		{"Fix", func(e *Example) { e.Fix = "" }},
		// Moving bytes between adjacent fields must change the digest
		// (length prefixes make the encoding unambiguous).
		{"boundary", func(e *Example) { e.Advisory, e.Ecosystem = "ad", "vnpm" }},
	}
	d0 := mustStore(t, base).Digest()
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			ex := base
			m.mut(&ex)
			require.NotEqual(t, d0, mustStore(t, ex).Digest())
		})
	}
	require.NotEqual(t, d0, NewStore().Digest(), "empty store")
}

// TestStoreDigestEncoding checks the digest against the format in doc.go,
// written out independently here.
func TestStoreDigestEncoding(t *testing.T) {
	exs := []Example{
		{ID: "b", Advisory: "two", Ecosystem: "Go", Package: "x/net", Fix: "-a\n+b\n"},
		{ID: "a", Advisory: strings.Repeat("long ", 40), Ecosystem: "npm", Package: "lodash"},
	}
	str := func(b []byte, s string) []byte {
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	var want []byte
	want = str(want, "codegenie/rag/store/v1")
	want = binary.AppendUvarint(want, 2)
	for _, ex := range []Example{exs[1], exs[0]} { // sorted by ID
		for _, f := range []string{ex.ID, ex.Advisory, ex.Ecosystem, ex.Package, ex.Fix} {
			want = str(want, f)
		}
	}
	require.Equal(t, events.Sum(want), mustStore(t, exs...).Digest())
}

func TestStoreAdd(t *testing.T) {
	base := Example{ID: "GHSA-1", Advisory: "adv", Ecosystem: "npm", Package: "p", Fix: "fix"}
	tests := []struct {
		name      string
		second    Example
		wantErr   error
		wantField string
	}{
		{name: "identical is a no-op", second: base},
		{name: "different advisory", second: func() Example { e := base; e.Advisory = "other"; return e }(), wantErr: ErrConflict, wantField: "Advisory"},
		{name: "different ecosystem", second: func() Example { e := base; e.Ecosystem = "Go"; return e }(), wantErr: ErrConflict, wantField: "Ecosystem"},
		{name: "different package", second: func() Example { e := base; e.Package = "q"; return e }(), wantErr: ErrConflict, wantField: "Package"},
		{name: "different fix", second: func() Example { e := base; e.Fix = "fix\n"; return e }(), wantErr: ErrConflict, wantField: "Fix"},
		{name: "empty ID", second: Example{Advisory: "x"}, wantErr: ErrInvalidExample},
		{name: "blank ID", second: Example{ID: " \t"}, wantErr: ErrInvalidExample},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustStore(t, base)
			before := s.Digest()
			err := s.Add(tc.second)
			require.Equal(t, before, s.Digest(), "a no-op or refused Add must leave the store unchanged")
			require.Equal(t, []Example{base}, s.Examples())
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			if tc.wantField != "" {
				var ce *ConflictError
				require.True(t, errors.As(err, &ce))
				require.Equal(t, "GHSA-1", ce.ID)
				require.Equal(t, tc.wantField, ce.Field)
				require.Contains(t, err.Error(), `"GHSA-1"`)
			}
		})
	}
}

func TestStoreExamplesSortedAndCopied(t *testing.T) {
	s := mustStore(t, Example{ID: "c"}, Example{ID: "a"}, Example{ID: "B"}, Example{ID: "b"})
	got := s.Examples()
	ids := make([]string, len(got))
	for i, e := range got {
		ids[i] = e.ID
	}
	require.Equal(t, []string{"B", "a", "b", "c"}, ids)
	got[0].Advisory = "mutated"
	require.Equal(t, "", s.Examples()[0].Advisory, "Examples must return a copy")
}

func TestStoreConcurrentAdd(t *testing.T) {
	exs := corpus(64)
	want := mustStore(t, exs...).Digest()
	s := NewStore()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(exs); i += 4 {
				if err := s.Add(exs[i]); err != nil {
					t.Error(err)
				}
				_ = s.Digest()
			}
		})
	}
	wg.Wait()
	require.Equal(t, want, s.Digest())
}
