package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// errBadResult is wrapped by errors about a result file.
var errBadResult = errors.New("bad result file")

// maxResultFile bounds one result file, and maxResultObjects the JSON
// objects in it: decoding turns a 3-byte "{}" into a struct of a hundred
// bytes or more, so the count bounds the memory a file decodes to.
const (
	maxResultFile    = 8 << 20
	maxResultObjects = 1 << 16
)

// readResult reads one result file: a regular file (not a symbolic link,
// a FIFO or a device) of at most 8 MiB and 65,536 JSON objects, holding
// strict JSON of resultFormat that Result.Validate accepts.
func readResult(path string) (Result, error) {
	var r Result
	// Lstat first: opening a FIFO for reading would block until a writer
	// comes.
	if err := regularFile(path); err != nil {
		return r, err
	}
	f, err := os.Open(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return r, err
	}
	if !fi.Mode().IsRegular() {
		return r, fmt.Errorf("%w: %s is not a regular file (%s)", errBadResult, path, fi.Mode().Type())
	}
	if fi.Size() > maxResultFile {
		return r, fmt.Errorf("%w: %s is over %d bytes", errBadResult, path, maxResultFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxResultFile+1))
	if err != nil {
		return r, fmt.Errorf("%w: %s: %w", errBadResult, path, err)
	}
	if len(b) > maxResultFile {
		return r, fmt.Errorf("%w: %s is over %d bytes", errBadResult, path, maxResultFile)
	}
	if n := bytes.Count(b, []byte("{")); n > maxResultObjects {
		return r, fmt.Errorf("%w: %s holds %d JSON objects or more, at most %d", errBadResult, path, n, maxResultObjects)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%w: %s: %w", errBadResult, path, err)
	}
	if dec.More() {
		return r, fmt.Errorf("%w: %s: data after the JSON value", errBadResult, path)
	}
	if r.Format != resultFormat {
		return r, fmt.Errorf("%w: %s: format %q, want %q (written by another version of codegenie? re-run the gate with this one)", errBadResult, path, r.Format, resultFormat)
	}
	if err := r.Validate(); err != nil {
		return r, fmt.Errorf("%w: %s: %w", errBadResult, path, err)
	}
	return r, nil
}

// regularFile refuses path unless it is a regular file itself.
func regularFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file (%s); a result file is one", errBadResult, path, fi.Mode().Type())
	}
	return nil
}

// ReadResults reads every *.json result file in dir, in file name order,
// each with Folder set to dir. An empty directory is an error: a gate
// that wrote nothing did not run.
func ReadResults(dir string) ([]Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no result files (*.json) in %s: did the gate run with -gate.results=%s?", errBadResult, dir, dir)
	}
	slices.Sort(files)
	out := make([]Result, 0, len(files))
	for _, f := range files {
		r, err := readResult(f)
		if err != nil {
			return nil, err
		}
		r.Folder = dir
		out = append(out, r)
	}
	return out, nil
}
