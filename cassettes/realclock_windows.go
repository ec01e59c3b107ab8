//go:build windows

package cassettes

import (
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	kernel32 = windows.NewLazySystemDLL("kernel32.dll")
	qpc      = kernel32.NewProc("QueryPerformanceCounter")
	// qpcPerSec is the counter's frequency, 0 when it cannot be read.
	qpcPerSec = sync.OnceValue(func() int64 {
		var f int64
		if r, _, _ := kernel32.NewProc("QueryPerformanceFrequency").Call(uintptr(unsafe.Pointer(&f))); r == 0 || f <= 0 {
			return 0
		}
		return f
	})
)

// realNow reads the performance counter (QueryPerformanceCounter), which
// testing/synctest does not fake, so it moves in real time inside a
// bubble too.
func realNow() time.Duration {
	f := qpcPerSec()
	var n int64
	if f == 0 {
		return fallbackNow()
	}
	if r, _, _ := qpc.Call(uintptr(unsafe.Pointer(&n))); r == 0 {
		return fallbackNow()
	}
	return time.Duration(n/f)*time.Second + time.Duration(n%f*int64(time.Second)/f)
}
