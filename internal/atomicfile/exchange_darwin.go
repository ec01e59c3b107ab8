package atomicfile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// exchange swaps the entries at a and b in one step (renamex_np with
// RENAME_SWAP). It wraps errors.ErrUnsupported where the file system
// cannot.
func exchange(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	}
	return err
}
