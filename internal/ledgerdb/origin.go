package ledgerdb

import (
	"runtime/debug"
)

// BuildRevision returns the VCS revision the running binary was built
// from (with "+dirty" when the tree was modified), or "" when the build
// carries none: go test binaries and -buildvcs=false builds do not, so
// callers let an explicit value win and fall back to this.
func BuildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return revisionOf(info)
}

func revisionOf(info *debug.BuildInfo) string {
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}

// CIJob returns the CI job identity from the variables CI systems set
// (GitHub Actions, GitLab CI, Buildkite, CircleCI, Jenkins), read through
// getenv, or "" outside CI. It is a value for the ledger's Entry.CIJob.
func CIJob(getenv func(string) string) string {
	if id := getenv("GITHUB_RUN_ID"); id != "" {
		job := "github:" + getenv("GITHUB_REPOSITORY") + "/" + id
		if a := getenv("GITHUB_RUN_ATTEMPT"); a != "" {
			job += "." + a
		}
		if j := getenv("GITHUB_JOB"); j != "" {
			job += "/" + j
		}
		return job
	}
	for _, v := range []struct{ system, env string }{
		{"gitlab", "CI_JOB_ID"}, {"buildkite", "BUILDKITE_JOB_ID"}, {"circleci", "CIRCLE_WORKFLOW_JOB_ID"}, {"jenkins", "BUILD_TAG"},
	} {
		if id := getenv(v.env); id != "" {
			return v.system + ":" + id
		}
	}
	return ""
}

// Revision returns the code revision under test: the binary's VCS stamp
// (BuildRevision), else the commit named by CODEGENIE_REVISION or by the
// variables CI systems set, read through getenv (go test binaries carry
// no VCS stamp); "" when none says.
func Revision(getenv func(string) string) string {
	if r := BuildRevision(); r != "" {
		return r
	}
	for _, k := range []string{"CODEGENIE_REVISION", "GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "CIRCLE_SHA1", "GIT_COMMIT"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return ""
}
