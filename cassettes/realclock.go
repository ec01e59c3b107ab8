package cassettes

import "time"

// clockStart anchors fallbackNow; package initialisation runs outside any
// synctest bubble.
//
//detvet:ignore the anchor of fallbackNow, which measures a recording's real timing
var clockStart = time.Now()

// fallbackNow is the runtime's monotonic clock since clockStart: real time
// outside a bubble, meaningless inside one (time.Now there reads the
// bubble's fake clock), where a recording then measures no timing.
func fallbackNow() time.Duration {
	if inBubble() {
		return 0
	}
	//detvet:ignore a recording measures the real timing of the API's answers; inside a bubble this returns 0
	return time.Since(clockStart)
}
