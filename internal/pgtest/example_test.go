package pgtest_test

import (
	"context"
	"fmt"

	"github.com/codegenie/codegenie/internal/pgtest"
)

func ExampleFind() {
	dir, err := pgtest.Find()
	fmt.Println(dir != "" || err != nil)
	// Output: true
}

// A test uses Start(t), which stops the server at cleanup; StartServer
// is the same for code that manages the lifetime itself.
func ExampleStartServer() {
	ctx := context.Background()
	srv, err := pgtest.StartServer(ctx, pgtest.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	if err := srv.Exec(ctx, "postgres", "CREATE DATABASE app"); err != nil {
		fmt.Println(err)
	}
	fmt.Println(srv.DSN("postgres", "app") != "")
}
