//go:build unix

package pgtest_test

import (
	"os"
	"syscall"
)

// ownerUID returns the user id owning fi's file.
func ownerUID(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
