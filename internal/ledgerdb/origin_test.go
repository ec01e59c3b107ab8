package ledgerdb

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRevisionOf(t *testing.T) {
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"none", nil, ""},
		{"clean", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}, "abc"},
		{"dirty", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}, "abc+dirty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, revisionOf(&debug.BuildInfo{Settings: tc.settings}))
		})
	}
}

func TestCIJob(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"not CI", map[string]string{}, ""},
		{"github", map[string]string{"GITHUB_RUN_ID": "42", "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_JOB": "gate"}, "github:o/r/42.2/gate"},
		{"gitlab", map[string]string{"CI_JOB_ID": "7"}, "gitlab:7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, CIJob(func(k string) string { return tc.env[k] }))
		})
	}
}
