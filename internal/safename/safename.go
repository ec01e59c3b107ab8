package safename

import (
	"encoding/hex"
	"strings"

	"lukechampine.com/blake3"
)

// MaxLen bounds the length of a name Of returns.
const MaxLen = 80

// Of returns s when it is already a safe path element (letters, digits,
// '-', '_' and '.', not starting with '.', at most MaxLen bytes, not
// empty). Otherwise it maps every other character to '_', drops leading
// dots, cuts the result to leave room, and appends '-' and the first 8 hex
// digits of the blake3-256 of s, so that two different names never map to
// the same element. The empty string gives "_" followed by that suffix.
func Of(s string) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= MaxLen-9 {
			break
		}
		if isSafe(r) {
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

func safe(s string) bool {
	if s == "" || len(s) > MaxLen || s[0] == '.' {
		return false
	}
	for _, r := range s {
		if !isSafe(r) {
			return false
		}
	}
	return true
}

func isSafe(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
}
