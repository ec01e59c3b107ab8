//go:build !linux && !darwin

package atomicfile

import "errors"

// exchange is not available here: directory writes fall back to two
// renames (see the package documentation).
func exchange(a, b string) error { return errors.ErrUnsupported }
