package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/codegenie/codegenie/ledger"
	"github.com/codegenie/codegenie/ledger/postgres"
)

// Install needs a role that may create tables and roles; CI then appends
// as a log-in role that is a member of codegenie_ledger_app.
func ExampleInstall() {
	ctx := context.Background()
	if err := postgres.Install(ctx, os.Getenv("LEDGER_OWNER_DSN")); err != nil {
		fmt.Println(err)
	}
}

// Importing the package (usually with _ beside a gated test's TestMain)
// is what lets ledger.Open and -gate.ledger take a postgres:// DSN.
func Example() {
	s, err := ledger.Open(context.Background(), os.Getenv("CODEGENIE_LEDGER"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
}
