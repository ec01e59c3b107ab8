package hint

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckTestName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, test string
		ok         bool
	}{
		{"test", "TestGate", true},
		{"bare Test", "Test", true},
		{"subtests", "TestGate/npm.v2/#01", true},
		{"subtest with symbols", `TestGate/a|b*(c)'"$x`, true},
		{"subtest starting with a dash", "TestGate/-o=x", true},
		{"unicode subtest", "TestGate/é", true},
		{"benchmark", "BenchmarkY", true},
		{"fuzz seed", "FuzzZ/seed#0", true},
		{"empty", "", false},
		{"a flag", "-test.coverprofile=x", false},
		{"a flag after Test", "Test-o=x", false},
		{"lower case after Test", "Testing", false},
		{"not a test", "Gate", false},
		{"newline", "TestGate\n-o=x", false},
		{"newline in a subtest", "TestGate/a\nb", false},
		{"space", "TestGate/a b", false},
		{"NUL", "TestGate/a\x00", false},
		{"invalid UTF-8", "TestGate/a\xff", false},
		{"escape", "TestGate/\x1b[31m", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTestName(tc.test)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, errName)
			require.ErrorContains(t, err, "test ")
		})
	}
}

func TestCheckPackage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pkg, arg string // arg "" when refused
	}{
		{"module root", ".", "."},
		{"relative directory", "./properties", "./properties"},
		{"directory without ./", "properties", "./properties"},
		{"nested directory", "a/b", "./a/b"},
		{"import path", "example.com/m/p", "example.com/m/p"},
		{"meta-package name is a directory", "all", "./all"},
		{"coverprofile flag", "-coverprofile=../some/file", ""},
		{"output flag", "-o=/tmp/x", ""},
		{"flag after ./", "./-o=x", ""},
		{"parent", "../x", ""},
		{"parent below ./", "./../x", ""},
		{"parent inside", "./a/../../x", ""},
		{"pattern", "./...", ""},
		{"pattern below", "example.com/m/...", ""},
		{"absolute", "/tmp/x", ""},
		{"backslash", `a\b`, ""},
		{"windows drive", `C:\x`, ""},
		{"newline", "a\nb", ""},
		{"space", "a b", ""},
		{"empty", "", ""},
		{"./ alone", "./", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPackage(tc.pkg)
			if tc.arg == "" {
				require.ErrorIs(t, err, errName)
				require.ErrorContains(t, err, "package ")
				_, err := GoTestRun("re-run", tc.pkg, "TestX")
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.arg, PackageArg(tc.pkg))
		})
	}
}

func TestCheckPathWord(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/tmp/e/bundle.tar.zst", "evidence/npm.tar.zst", `C:\e\b.zst`, "a b/é"} {
		require.NoError(t, CheckPathWord(p), p)
	}
	for _, p := range []string{"-o=x", "a\nb", "a\x00", "\xff", "a\x1b[31m"} {
		require.ErrorIs(t, CheckPathWord(p), errName, p)
	}
}

// TestGoTestRun: the package comes first, the test name only as an
// anchored -run pattern, and a name that could be read as a flag is
// refused before any command is built.
func TestGoTestRun(t *testing.T) {
	t.Parallel()
	c, err := GoTestRun("re-run", "properties", "TestGate/-o=x", "-args", "-gate.results=/r")
	require.NoError(t, err)
	require.Equal(t, []string{"go", "test", "./properties", "-run", `^TestGate$/^-o=x$`, "-count=1", "-args", "-gate.results=/r"}, c.Argv)
	_, err = GoTestRun("re-run", ".", "-test.run=x")
	require.ErrorContains(t, err, `test "-test.run=x"`)
	_, err = GoTestRun("re-run", "-coverprofile=x", "TestGate")
	require.ErrorContains(t, err, `package "-coverprofile=x"`)
}
