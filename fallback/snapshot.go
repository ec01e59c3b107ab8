package fallback

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/codegenie/codegenie/prompt"
)

// EmptyTreeSHA is the git tree hash of a tree with no entries, which is what
// SnapshotSHA returns for a RepoContext without files.
const EmptyTreeSHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// RepoContext is the repository snapshot a run works on: the files the model
// is shown and the diff is applied to. Files need not be sorted; paths are
// slash-separated and relative to the repository root.
type RepoContext struct {
	Files []prompt.File
}

// PathError reports a repository path that cannot be part of a snapshot.
type PathError struct {
	Path   string // the offending path, as given
	Reason string // what is wrong with it and how to fix it
}

func (e *PathError) Error() string {
	return fmt.Sprintf("fallback: repo path %q: %s", e.Path, e.Reason)
}

// Unwrap returns ErrInvalidRepo.
func (e *PathError) Unwrap() error { return ErrInvalidRepo }

// validatePath checks that p is a clean, relative, slash-separated path that
// git could store.
func validatePath(p string) error {
	bad := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return bad("empty path; give every file a path relative to the repo root")
	case strings.HasPrefix(p, "/"):
		return bad("absolute path; make it relative to the repo root")
	case strings.HasSuffix(p, "/"):
		return bad("trailing slash; a file path must name a file")
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("control character in path; rename the file")
	case strings.ContainsRune(p, '\\'):
		return bad("backslash in path; use forward slashes")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return bad("empty path segment (\"//\"); clean the path")
		case ".", "..":
			return bad("\".\" or \"..\" segment; clean the path")
		case ".git":
			return bad("\".git\" segment; git does not track its own directory")
		}
	}
	return nil
}

// sortedFiles validates the files and returns them sorted by path. Duplicate
// paths and a path that is both a file and a directory are errors.
func sortedFiles(files []prompt.File) ([]prompt.File, error) {
	fs := slices.Clone(files)
	for _, f := range fs {
		if err := validatePath(f.Path); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(fs, func(a, b prompt.File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(fs); i++ {
		if fs[i].Path == fs[i-1].Path {
			return nil, &PathError{Path: fs[i].Path, Reason: "duplicate path; give each file once"}
		}
	}
	// A file "a" and a file "a/b" cannot both exist. In byte order every
	// "a/..." path sorts after "a" but maybe not right after it ("a.b" sorts
	// between), so check each path's parent directories against the set.
	set := make(map[string]struct{}, len(fs))
	for _, f := range fs {
		set[f.Path] = struct{}{}
	}
	for _, f := range fs {
		for i := 0; i < len(f.Path); i++ {
			if f.Path[i] != '/' {
				continue
			}
			if _, ok := set[f.Path[:i]]; ok {
				return nil, &PathError{Path: f.Path[:i], Reason: fmt.Sprintf("is both a file and the directory of %q; rename one", f.Path)}
			}
		}
	}
	return fs, nil
}

// SnapshotSHA returns the git tree hash (SHA-1 object format) of the files:
// the value `git write-tree` prints after `git add` of exactly these files
// with mode 100644. It is the repo_snapshot_sha of the run's pin. Invalid
// paths (absolute, unclean, duplicated, a file that is also a directory)
// give a *PathError wrapping ErrInvalidRepo.
func (r RepoContext) SnapshotSHA() (string, error) {
	fs, err := sortedFiles(r.Files)
	if err != nil {
		return "", err
	}
	return snapshotSHA(fs), nil
}

// snapshotSHA is SnapshotSHA of files already validated and sorted by
// sortedFiles.
func snapshotSHA(fs []prompt.File) string {
	sum := writeTree(fs, "")
	return hex.EncodeToString(sum[:])
}

// treeEntry is one entry of a git tree object.
type treeEntry struct {
	name string
	dir  bool
	sha  [sha1.Size]byte
}

// sortKey is the name git sorts a tree entry by: directories compare as if
// their name ended in "/".
func (e treeEntry) sortKey() string {
	if e.dir {
		return e.name + "/"
	}
	return e.name
}

// writeTree hashes the tree for the files under prefix (which ends in "/" or
// is empty). fs is sorted and every path in it starts with prefix.
func writeTree(fs []prompt.File, prefix string) [sha1.Size]byte {
	var entries []treeEntry
	for i := 0; i < len(fs); {
		rest := fs[i].Path[len(prefix):]
		dir, _, isDir := strings.Cut(rest, "/")
		if !isDir {
			entries = append(entries, treeEntry{name: rest, sha: gitObject("blob", fs[i].Content)})
			i++
			continue
		}
		sub := prefix + dir + "/"
		j := i
		for j < len(fs) && strings.HasPrefix(fs[j].Path, sub) {
			j++
		}
		entries = append(entries, treeEntry{name: dir, dir: true, sha: writeTree(fs[i:j], sub)})
		i = j
	}
	slices.SortFunc(entries, func(a, b treeEntry) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	var buf bytes.Buffer
	for _, e := range entries {
		if e.dir {
			buf.WriteString("40000 ")
		} else {
			buf.WriteString("100644 ")
		}
		buf.WriteString(e.name)
		buf.WriteByte(0)
		buf.Write(e.sha[:])
	}
	return gitObject("tree", buf.Bytes())
}

// gitObject returns the SHA-1 object id of a git object of the given type.
func gitObject(kind string, content []byte) [sha1.Size]byte {
	h := sha1.New()
	h.Write([]byte(kind + " " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	return sum
}
