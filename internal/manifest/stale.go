package manifest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// Staleness is one cassette past its maximum age, or with a limit and no
// known recording time.
type Staleness struct {
	// File is the cassette's path relative to its directory; Path joins
	// the directory.
	File, Path string
	// RecordedAt is when it was recorded (zero: unknown); Age is how long
	// before the instant it was judged at.
	RecordedAt time.Time
	Age        time.Duration
	// MaxAge and HardMaxAge are the limits in force (0: none).
	MaxAge, HardMaxAge time.Duration
	// Expired says it is past HardMaxAge.
	Expired bool
	// Command re-records it.
	Command string
}

func (s Staleness) String() string {
	if s.RecordedAt.IsZero() {
		return fmt.Sprintf("%s: its recording time is unknown (the manifest has no recorded_at) and it has a maximum age of %s; re-record it to start its clock: %s",
			s.Path, FormatAge(s.MaxAge), s.Command)
	}
	limit, what := s.MaxAge, "maximum age"
	if s.Expired {
		limit, what = s.HardMaxAge, "hard maximum age"
	}
	return fmt.Sprintf("%s: recorded %s, %s ago, past its %s of %s; re-record it with: %s",
		s.Path, s.RecordedAt.UTC().Format(time.RFC3339), FormatAge(s.Age), what, FormatAge(limit), s.Command)
}

// Stale lists the cassettes of m, the manifest of dir, that are past their
// maximum age at now (or have a limit and no recording time), by file;
// refresh names the command that re-records the cassette at a path.
func (m *Manifest) Stale(dir string, now time.Time, refresh func(path string) string) []Staleness {
	var out []Staleness
	for _, e := range m.Cassettes {
		s := Staleness{File: e.File, Path: filepath.Join(dir, filepath.FromSlash(e.File))}
		s.MaxAge, s.HardMaxAge = m.Limits(e)
		if s.MaxAge == 0 && s.HardMaxAge == 0 {
			continue
		}
		if s.MaxAge == 0 || (s.HardMaxAge > 0 && s.HardMaxAge < s.MaxAge) {
			s.MaxAge = s.HardMaxAge
		}
		s.Command = refresh(s.Path)
		if e.RecordedAt == "" {
			out = append(out, s)
			continue
		}
		s.RecordedAt, _ = time.Parse(time.RFC3339, e.RecordedAt)
		s.Age = now.Sub(s.RecordedAt)
		if s.Age <= s.MaxAge {
			continue
		}
		s.Expired = s.HardMaxAge > 0 && s.Age > s.HardMaxAge
		out = append(out, s)
	}
	return out
}

// FormatAge writes d in whole days when it is at least a day, else as a
// Go duration.
func FormatAge(d time.Duration) string {
	if d >= 24*time.Hour {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}
