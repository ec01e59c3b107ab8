package refreshenv

import (
	"os"
	"path/filepath"
)

// The environment variables (see the package documentation).
const (
	List  = "CODEGENIE_CASSETTES_LIST"
	Stage = "CODEGENIE_CASSETTES_STAGE"
)

// Opened is one line of a listing: one cassettes.Open, as the test
// binary saw it.
type Opened struct {
	// Path is the cassette's absolute path.
	Path string `json:"path"`
	// Opened is the path as the test passed it to Open (relative to the
	// package directory, slash-separated), which the record switch
	// matches.
	Opened string `json:"opened"`
	// Exists says the file existed when it was opened.
	Exists bool `json:"exists"`
	// Hosts are the hosts its recorded requests went to, sorted.
	Hosts []string `json:"hosts,omitempty"`
	// Redirects are the API roots requests were redirected from to a
	// local fake or a proxy (cassettes.Redirect) in the process by then,
	// sorted: what a recording by this test is sent through.
	Redirects []string `json:"redirects,omitempty"`
}

// Missed is a line of a listing that tells of a replayed request that
// no recorded interaction of a cassette served (a cassettes.MissError).
// A line is an Opened or a Missed: a Missed has "missed".
type Missed struct {
	// Missed is the cassette's absolute path.
	Missed string `json:"missed"`
	// VersionChange is what changed when the request differed from its
	// recording only in the API version its SDK sends (the miss's
	// VersionChange); "" for any other miss.
	VersionChange string `json:"version_change,omitempty"`
}

// maxModuleDepth bounds the walk up to a go.mod.
const maxModuleDepth = 64

// ModuleRoot returns the directory of the go.mod nearest above dir
// (dir included), or "" when there is none.
func ModuleRoot(dir string) string {
	dir = filepath.Clean(dir)
	for range maxModuleDepth {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && fi.Mode().IsRegular() {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
	return ""
}

// StagedPath is where, under the staging directory stage, the cassette
// at the absolute path abs of the module rooted at root is staged: stage
// and its path from root. ok is false for a cassette outside the module.
func StagedPath(stage, root, abs string) (path string, ok bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.Join(stage, rel), true
}
