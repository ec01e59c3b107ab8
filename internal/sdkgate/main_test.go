package sdkgate

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/codegenie/codegenie/harness"
)

// TestMain runs the tests through harness.Main, as a user's gated package
// does, and fails them if any goroutine outlived them.
func TestMain(m *testing.M) {
	code := harness.Main(m)
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintf(os.Stderr, "sdkgate: goroutines outlived the tests: %v\n", err)
		code = 1
	}
	os.Exit(code)
}
