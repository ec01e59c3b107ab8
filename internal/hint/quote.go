package hint

import "strings"

// Quote returns s as one shell word: unchanged when it holds only letters,
// digits and /._-+=:,@%, otherwise in single quotes, with each single quote
// closed, escaped with a backslash and reopened.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, unsafe) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func unsafe(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
}

// Join quotes each word of argv for a shell and joins them with spaces.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, w := range argv {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}
