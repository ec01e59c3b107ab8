package cassettes

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/codegenie/codegenie/internal/manifest"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// ErrExpired: a cassette is older than its hard maximum age. CI never
// re-records on its own: the steward re-records it.
var ErrExpired = errors.New("cassette past its hard maximum age")

// VerifyConfig configures [Verify]. The zero value judges ages at
// time.Now, drops warnings, and names the go test line that re-records a
// cassette.
type VerifyConfig struct {
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

// freshness warns about and fails on the stale cassettes of m.
func freshness(dir string, m *manifest.Manifest, cfg VerifyConfig) []error {
	//detvet:ignore the default of VerifyOptions.Now: a cassette's age is measured against the real date by design
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	var errs []error
	refresh := cfg.Refresh
	if refresh == nil {
		refresh = func(path string) string { return rerecordHint(path, Config{}) }
	}
	for _, s := range m.Stale(dir, now(), refresh) {
		if s.Expired {
			errs = append(errs, newErr(s.Path, 0, "verify", detailf(ErrExpired, "%v: %s", ErrExpired, s)))
		} else if cfg.Warn != nil {
			fmt.Fprintf(cfg.Warn, "warning: %s\n", s)
		}
	}
	return errs
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
