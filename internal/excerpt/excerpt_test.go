package excerpt

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFirstDiff(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		name   string
		a, b   string
		offset int
		ok     bool
	}{
		{name: "equal", a: "abc", b: "abc"},
		{name: "both empty", a: "", b: ""},
		{name: "first byte", a: "abc", b: "xbc", offset: 0, ok: true},
		{name: "prefix", a: "ab", b: "abc", offset: 2, ok: true},
		{name: "past a block", a: long + "a", b: long + "b", offset: 200, ok: true},
		{name: "inside a block", a: long[:70] + "a" + long, b: long[:70] + "b" + long, offset: 70, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, ok := FirstDiff([]byte(tt.a), []byte(tt.b))
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.offset, off)
		})
	}
}

func TestAround(t *testing.T) {
	tests := []struct {
		name   string
		b      string
		offset int
		radius int
		want   string
	}{
		{name: "whole", b: "hello", offset: 2, radius: 10, want: "hello"},
		{name: "cut both sides", b: "0123456789", offset: 5, radius: 2, want: "…3456…"},
		{name: "at end", b: "abc", offset: 3, radius: 2, want: "…bc<end>"},
		{name: "escapes", b: "a\n\t\\\x1b", offset: 0, radius: 10, want: `a\n\t\\\x1b`},
		{name: "no half rune", b: "ééé", offset: 3, radius: 1, want: "…é…"},
		{name: "invalid utf-8", b: "a\xffb", offset: 0, radius: 5, want: `a\xffb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Around([]byte(tt.b), tt.offset, tt.radius))
		})
	}
}

func TestHead(t *testing.T) {
	require.Equal(t, "abc", Head("abc", 5))
	require.Equal(t, "ab", Head("abc", 2))
	require.Equal(t, "a", Head("aé", 2), "never half a rune")
	require.Equal(t, "", Head("abc", -1))
}

func TestQuote(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "plain", in: "retrieval.ranked", want: "retrieval.ranked"},
		{name: "space and unicode", in: "lane é 1", want: "lane é 1"},
		{name: "escape sequence", in: "\x1b[31mred", want: `"\x1b[31mred"`},
		{name: "newline", in: "a\nb", want: `"a\nb"`},
		{name: "invalid utf-8", in: "a\xff", want: `"a\xff"`},
		{name: "quote", in: `a"b`, want: `"a\"b"`},
		{name: "bidi override", in: "a\u202eb", want: `"a\u202eb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Quote(tt.in))
		})
	}
}
