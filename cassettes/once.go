package cassettes

import (
	"fmt"
	"path/filepath"
	"sync"
)

// recordedOnce is, per cassette path (absolute), which opening the test
// flags made record in this process, and whether it has been saved (or
// given up): a cassette is recorded once per go test process, by the
// first test that opens it under the record switch, and every later
// opening replays that recording.
var recordedOnce struct {
	sync.Mutex
	m map[string]*onceClaim
}

type onceClaim struct {
	test string // the test that records it ("" outside OpenT)
	done bool   // its recording was saved or given up
}

// claimRecording decides the mode of an opening the test flags would
// make record: Record for the first in this process, Replay once that
// recording has ended, and an error naming both tests while it is still
// being recorded.
func claimRecording(path, test string) (Mode, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	recordedOnce.Lock()
	defer recordedOnce.Unlock()
	c, ok := recordedOnce.m[abs]
	switch {
	case !ok:
		if recordedOnce.m == nil {
			recordedOnce.m = map[string]*onceClaim{}
		}
		recordedOnce.m[abs] = &onceClaim{test: test}
		return Record, nil
	case c.done:
		return Replay, nil
	}
	return 0, fmt.Errorf("%s opens this cassette under -%s while %s is still recording it: a cassette is recorded once per go test process, and a second recording would replace the first; record it from one test (go test -run with that test's name), or let %s finish first (no t.Parallel)",
		testLabel(test), RecordFlag, testLabel(c.test), testLabel(test))
}

// endRecording notes that the recording of path has ended (saved or not).
func endRecording(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	recordedOnce.Lock()
	defer recordedOnce.Unlock()
	if c, ok := recordedOnce.m[abs]; ok {
		c.done = true
	}
}

func testLabel(test string) string {
	if test == "" {
		return "an Open outside a test"
	}
	return test
}
