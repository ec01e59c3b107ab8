//go:build !unix

package pgtest_test

import "os"

// ownerUID is not known here.
func ownerUID(os.FileInfo) (uint32, bool) { return 0, false }
