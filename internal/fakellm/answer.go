package fakellm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/codegenie/codegenie/internal/promptparse"
	"github.com/codegenie/codegenie/prompt"
)

// Advisory-ID markers. A marker anywhere in the advisory ID (case-insensitive)
// overrides Config.Mode for that request.
const (
	MarkerGarbage     = "FAKELLM-GARBAGE"
	MarkerNoDiff      = "FAKELLM-NODIFF"
	MarkerNonApplying = "FAKELLM-NONAPPLYING"
	MarkerEmpty       = "FAKELLM-EMPTY"
	MarkerTruncated   = "FAKELLM-TRUNCATED"
	MarkerFailFirst   = "FAKELLM-FAILFIRST"
	// MarkerHTTPPrefix is followed by a three-digit status, e.g.
	// "FAKELLM-HTTP-503".
	MarkerHTTPPrefix = "FAKELLM-HTTP-"
)

// reply is what the server decided to answer, independent of the wire.
type reply struct {
	status int    // 200, or the error status
	text   string // completion text (200) or error message
	mode   Mode
}

// modeFor returns the mode for in: a marker in the advisory ID wins over
// the configured mode. ok reports a marker-selected status.
func (s *Server) modeFor(id string) (Mode, int) {
	up := strings.ToUpper(id)
	if i := strings.Index(up, MarkerHTTPPrefix); i >= 0 {
		digits := up[i+len(MarkerHTTPPrefix):]
		if len(digits) >= 3 {
			if code, err := strconv.Atoi(digits[:3]); err == nil && code >= 400 && code <= 599 {
				return HTTPError, code
			}
		}
		return HTTPError, s.cfg.Status
	}
	for _, m := range []struct {
		marker string
		mode   Mode
	}{
		{MarkerGarbage, Garbage},
		{MarkerNoDiff, NoDiff},
		{MarkerNonApplying, NonApplying},
		{MarkerEmpty, Empty},
		{MarkerTruncated, Truncated},
		{MarkerFailFirst, FailFirst},
	} {
		if strings.Contains(up, m.marker) {
			return m.mode, s.cfg.Status
		}
	}
	return s.cfg.Mode, s.cfg.Status
}

// answer decides the reply to a user prompt. It never fails: a prompt that
// promptparse cannot parse is echoed back.
func (s *Server) answer(user string) reply {
	in, err := promptparse.Parse(user)
	if err != nil {
		// Only the modes that do not need a repository apply to a prompt
		// that promptparse cannot read; the rest echo it.
		switch mode := s.cfg.Mode; mode {
		case HTTPError:
			return reply{status: s.cfg.Status, text: "fakellm: configured to fail with status " + strconv.Itoa(s.cfg.Status), mode: mode}
		case Empty:
			return reply{status: 200, mode: mode}
		case Truncated:
			return reply{status: 200, text: "fakellm echo: " + user, mode: mode}
		}
		return reply{status: 200, text: "fakellm echo: " + user, mode: Normal}
	}
	mode, status := s.modeFor(in.Advisory.ID)
	if mode == FailFirst {
		if len(in.Attempts) == 0 {
			mode = Garbage
		} else {
			mode = Normal
		}
	}
	switch mode {
	case HTTPError:
		return reply{status: status, text: fmt.Sprintf("fakellm: failing advisory %s with status %d", in.Advisory.ID, status), mode: mode}
	case Empty:
		return reply{status: 200, mode: mode}
	case Garbage:
		sum := sha256.Sum256([]byte(user))
		return reply{status: 200, text: prompt.FormatAnswer([]byte("this is not a diff " + hex.EncodeToString(sum[:8]) + "\n")), mode: mode}
	case NoDiff:
		return reply{status: 200, text: noDiffText(in.Advisory), mode: mode}
	}
	changes := bump(in)
	if len(changes) == 0 {
		return reply{status: 200, text: noDiffText(in.Advisory) + " (no manifest shown pins " + in.Advisory.Package + " below " + in.Advisory.FixedVersion + ")", mode: NoDiff}
	}
	if mode == NonApplying {
		changes = mangle(changes)
	}
	return reply{status: 200, text: prompt.FormatAnswer(unifiedDiff(changes)), mode: mode}
}

func noDiffText(a prompt.Advisory) string {
	return fmt.Sprintf("I looked at %s in %s. Upgrading %s to %s should fix it, but I cannot produce a patch.",
		a.ID, a.Ecosystem, a.Package, a.FixedVersion)
}
