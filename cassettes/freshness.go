package cassettes

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/codegenie/codegenie/internal/manifest"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// ErrExpired: a cassette is older than its hard maximum age. CI never
// re-records on its own: the steward re-records it.
var ErrExpired = errors.New("cassette past its hard maximum age")

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
			s.Path, formatAge(s.MaxAge), s.Command)
	}
	limit, what := s.MaxAge, "maximum age"
	if s.Expired {
		limit, what = s.HardMaxAge, "hard maximum age"
	}
	return fmt.Sprintf("%s: recorded %s, %s ago, past its %s of %s; re-record it with: %s",
		s.Path, s.RecordedAt.UTC().Format(time.RFC3339), formatAge(s.Age), what, formatAge(limit), s.Command)
}

// VerifyOptions configures [Verify]. The zero value judges ages at
// time.Now, drops warnings, and names the go test line that re-records a
// cassette.
type VerifyOptions struct {
	// Now is the instant ages are judged at; nil means time.Now. Only
	// freshness reads it: nothing else Verify checks depends on time.
	Now func() time.Time
	// Warn receives one line for each cassette past its maximum age (or
	// with a limit and no recording time); nil drops them.
	Warn io.Writer
	// Refresh returns the command that re-records the cassette at path;
	// nil means the go test line with the record flag.
	Refresh func(path string) string
}

// Stale lists the cassettes of dir's manifest that are past their maximum
// age at now (or have a limit and no recording time), by file. refresh
// names the command for each (nil: the go test line).
func Stale(dir string, now time.Time, refresh func(path string) string) ([]Staleness, error) {
	m, err := readManifest(filepath.Join(dir, manifest.Name))
	if err != nil {
		return nil, err
	}
	return staleEntries(dir, m, now, refresh), nil
}

func staleEntries(dir string, m *manifest.Manifest, now time.Time, refresh func(string) string) []Staleness {
	if refresh == nil {
		refresh = func(path string) string { return rerecordHint(path, Options{}) }
	}
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

// freshness warns about and fails on the stale cassettes of m.
func freshness(dir string, m *manifest.Manifest, opts VerifyOptions) []error {
	//detvet:ignore the default of VerifyOptions.Now: a cassette's age is measured against the real date by design
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var errs []error
	for _, s := range staleEntries(dir, m, now(), opts.Refresh) {
		if s.Expired {
			errs = append(errs, newErr(s.Path, 0, "verify", detailf(ErrExpired, "%v: %s", ErrExpired, s)))
		} else if opts.Warn != nil {
			fmt.Fprintf(opts.Warn, "warning: %s\n", s)
		}
	}
	return errs
}

// formatAge writes d in whole days when it is at least a day, else as a
// Go duration.
func formatAge(d time.Duration) string {
	if d >= 24*time.Hour {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// recordedAt is the manifest's recorded_at of an update: u.RecordedAt, or
// at when it is an RFC 3339 time, or "" (unknown).
func recordedAt(u Update, at string) string {
	if !u.RecordedAt.IsZero() {
		return u.RecordedAt.UTC().Format(time.RFC3339)
	}
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return ""
}

// responseDate is the latest Date header of the captured responses, as
// the server sent it (before redaction), or the zero time.
func responseDate(captured []*cassette.Interaction) time.Time {
	var latest time.Time
	for _, in := range captured {
		if t, err := http.ParseTime(http.Header(in.Response.Headers).Get("Date")); err == nil && t.After(latest) {
			latest = t
		}
	}
	return latest
}
