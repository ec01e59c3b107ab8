package atomicfile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// exchange swaps the entries at a and b in one step (renameat2 with
// RENAME_EXCHANGE). It wraps errors.ErrUnsupported where the kernel or the
// file system cannot.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	}
	return err
}
