//go:build !linux

package childproc

// injectOS makes the refusals of f that only Linux has: none here.
func injectOS(Faults) (undo func()) { return func() {} }

// forgetOS forgets what earlier children found: nothing here.
func forgetOS() {}
