package manifest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseAge parses a maximum age: a Go duration ("720h", "90m") or a
// whole number of days ("30d"). It must be positive.
func ParseAge(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int64
		days, err = strconv.ParseInt(n, 10, 64)
		if err == nil && (days <= 0 || days > 100*365) {
			err = errors.New("out of range")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("age %q is not a positive Go duration or a number of days such as \"30d\"", s)
	}
	return d, nil
}

// parseAgeOr parses s, or def when s is empty; "" for both is 0.
func parseAgeOr(s, def string) (time.Duration, error) {
	if s == "" {
		s = def
	}
	if s == "" {
		return 0, nil
	}
	return ParseAge(s)
}

// checkAges validates the freshness fields of m.
func checkAges(m *Manifest) error {
	for _, a := range []struct{ name, v string }{{"max_age", m.MaxAge}, {"hard_max_age", m.HardMaxAge}} {
		if _, err := parseAgeOr(a.v, ""); err != nil {
			return fmt.Errorf("%s: %v", a.name, err)
		}
	}
	for i, e := range m.Cassettes {
		for _, a := range []struct{ name, v string }{{"max_age", e.MaxAge}, {"hard_max_age", e.HardMaxAge}} {
			if _, err := parseAgeOr(a.v, ""); err != nil {
				return entryErrf("cassettes", i, "cassette %q: %s: %v", e.File, a.name, err)
			}
		}
		if e.RecordedAt != "" {
			if _, err := time.Parse(time.RFC3339, e.RecordedAt); err != nil {
				return entryErrf("cassettes", i, "cassette %q: recorded_at %q is not an RFC 3339 time", e.File, e.RecordedAt)
			}
		}
	}
	return nil
}

// Limits returns the maximum age and hard maximum age in force for e (its
// own, else m's; 0: none). Parse checked every age, so they parse.
func (m *Manifest) Limits(e Entry) (maxAge, hardMaxAge time.Duration) {
	maxAge, _ = parseAgeOr(e.MaxAge, m.MaxAge)
	hardMaxAge, _ = parseAgeOr(e.HardMaxAge, m.HardMaxAge)
	return maxAge, hardMaxAge
}
