package cassettes

import (
	"os"

	"github.com/codegenie/codegenie/internal/atomicfile"
)

// tempFile is what atomic writes need from a temporary file.
type tempFile = atomicfile.File

// filePerm is the mode of cassettes and the manifest: they are committed
// to the repository and read by everyone.
const filePerm os.FileMode = 0o644

// writeFileAtomic replaces path with data (see atomicfile); create is the
// createTemp test seam, nil for os.CreateTemp. A failure at any point
// leaves the previous file untouched.
func writeFileAtomic(path string, data []byte, create func(dir, pattern string) (tempFile, error)) error {
	if err := (atomicfile.Config{CreateTemp: create}).WriteFile(path, data, filePerm); err != nil {
		return newErr(path, 0, "write", err)
	}
	return nil
}
