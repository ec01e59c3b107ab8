//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package cassettes

import "time"

// realNow is the runtime's clock here: inside a testing/synctest bubble it
// is the bubble's fake clock, so a stream recorded there keeps no timing.
func realNow() time.Duration { return fallbackNow() }
