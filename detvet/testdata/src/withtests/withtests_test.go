package withtests

import "time"

// A test file need not import testing; this one only reads the clock.
var started = time.Now()

var elapsed = func() time.Duration { return time.Since(started) }
