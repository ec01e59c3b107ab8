package atomicfile_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/codegenie/codegenie/internal/atomicfile"
)

func ExampleWriteFile() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "report.txt")

	if err := atomicfile.WriteFile(path, []byte("v1\n"), 0o644); err != nil {
		fmt.Println(err)
	}
	if err := atomicfile.WriteFile(path, []byte("v2\n"), 0o644); err != nil {
		fmt.Println(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	fmt.Printf("%s%v\n", b, fi.Mode().Perm())
	// Output:
	// v2
	// -rw-r--r--
}

// brokenFile fails every write, like a full disk.
type brokenFile struct{ *os.File }

func (brokenFile) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func ExampleConfig_WriteFile() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cassette.yaml")
	_ = os.WriteFile(path, []byte("old\n"), 0o644)

	opts := atomicfile.Config{CreateTemp: func(dir, pattern string) (atomicfile.File, error) {
		f, err := os.CreateTemp(dir, pattern)
		return brokenFile{f}, err
	}}
	err := opts.WriteFile(path, []byte("new\n"), 0o644)
	fmt.Println(errors.Unwrap(err))
	ents, _ := os.ReadDir(dir)
	b, _ := os.ReadFile(path)
	fmt.Printf("%d file: %s", len(ents), b)
	// Output:
	// disk full
	// 1 file: old
}

func ExampleConfig_Stage() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")

	// Stage both files before replacing either, so a failure while
	// writing leaves both unchanged.
	var opts atomicfile.Config
	sa, err := opts.Stage(a, []byte(`{"a":1}`), 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sa.Discard()
	sb, err := opts.Stage(b, []byte(`{"b":2}`), 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Discard()
	fmt.Println(sa.Commit(), sb.Commit())
	ga, _ := os.ReadFile(a)
	gb, _ := os.ReadFile(b)
	fmt.Printf("%s %s\n", ga, gb)
	// Output:
	// <nil> <nil>
	// {"a":1} {"b":2}
}

func ExampleConfig_StageFunc() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "list.txt")

	s, err := atomicfile.Config{}.StageFunc(path, 0o644, func(w io.Writer) error {
		for i := range 3 {
			if _, err := fmt.Fprintf(w, "line %d\n", i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Commit(); err != nil {
		fmt.Println(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// line 0
	// line 1
	// line 2
}

func ExampleStaged_Commit() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "manifest.json")

	s, _ := atomicfile.Config{}.Stage(path, []byte("{}\n"), 0o644)
	fmt.Println(s.Commit())
	fmt.Println(errors.Is(s.Commit(), atomicfile.ErrFinished))
	// Output:
	// <nil>
	// true
}

func ExampleStaged_Discard() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "manifest.json")
	_ = os.WriteFile(path, []byte("old\n"), 0o644)

	s, _ := atomicfile.Config{}.Stage(path, []byte("new\n"), 0o644)
	s.Discard()
	ents, _ := os.ReadDir(dir)
	b, _ := os.ReadFile(path)
	fmt.Printf("%d file: %s", len(ents), b)
	// Output:
	// 1 file: old
}

func ExampleWriteDir() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.bundle")

	for _, v := range []string{"v1", "v2"} {
		err := atomicfile.WriteDir(path, 0o755, func(tmp string) error {
			return os.WriteFile(filepath.Join(tmp, "manifest.json"), []byte(v+"\n"), 0o644)
		})
		if err != nil {
			fmt.Println(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(path, "manifest.json"))
	ents, _ := os.ReadDir(dir)
	fmt.Printf("%s%d entry\n", b, len(ents))
	// Output:
	// v2
	// 1 entry
}

func ExampleConfig_StageDir() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.bundle")

	s, err := atomicfile.Config{}.StageDir(path, 0o755, func(tmp string) error {
		return os.WriteFile(filepath.Join(tmp, "events.log"), []byte("log\n"), 0o644)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, statErr := os.Stat(path)
	fmt.Println("before commit, exists:", statErr == nil)
	if err := s.Commit(); err != nil {
		fmt.Println(err)
	}
	_, statErr = os.Stat(path)
	fmt.Println("after commit, exists:", statErr == nil)
	// Output:
	// before commit, exists: false
	// after commit, exists: true
}

func ExampleRemoveLeftovers() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cassette.yaml")
	// A write killed after staging left its temporary file behind.
	_ = os.WriteFile(filepath.Join(dir, ".cassette.yaml.tmp-4711"), []byte("half"), 0o600)

	if err := atomicfile.RemoveLeftovers(path); err != nil {
		fmt.Println(err)
	}
	ents, _ := os.ReadDir(dir)
	fmt.Println(len(ents), "entries left")
	// Output:
	// 0 entries left
}
