package hint

import (
	"encoding/hex"
	"strings"

	"lukechampine.com/blake3"
)

// maxSafeName bounds the length of a name SafeName returns.
const maxSafeName = 80

// SafeName turns a free-form name (a scenario, a run, a test) into one
// path element that is safe on every file system codegenie writes to: no
// separators, no leading dot, no characters a shell or a file system
// treats specially, bounded length, and distinct names stay distinct.
//
// It returns s when s is already such an element (letters, digits, '-',
// '_' and '.', not starting with '.', at most 80 bytes, not empty).
// Otherwise it maps every other character to '_', drops leading dots,
// cuts the result to leave room, and appends '-' and the first 8 hex
// digits of the blake3-256 of s, so that two different names never map to
// the same element. The empty string gives "_" followed by that suffix.
func SafeName(s string) string {
	if safeName(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxSafeName-9 {
			break
		}
		if safeNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	base := strings.TrimLeft(b.String(), ".")
	if base == "" {
		base = "_"
	}
	sum := blake3.Sum256([]byte(s))
	return base + "-" + hex.EncodeToString(sum[:4])
}

func safeName(s string) bool {
	if s == "" || len(s) > maxSafeName || s[0] == '.' {
		return false
	}
	for _, r := range s {
		if !safeNameRune(r) {
			return false
		}
	}
	return true
}

func safeNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
}
