package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// errTorn: the embedded store's file does not end with a newline.
var errTorn = errors.New("torn last line")

// repairSuffix names the log of repairs beside a ledger.
const repairSuffix = ".repairs"

// RepairReport is what Config.Repair did to an embedded ledger, and the
// line it adds to the repair log beside it (the ledger's path plus
// ".repairs", one canonical JSON object a line).
type RepairReport struct {
	// At is when, from Config.Now.
	At time.Time `json:"at"`
	// Action is "none" (the file ended with a complete line), "dropped"
	// (a torn last line was truncated) or "completed" (the last line was
	// a whole entry chained to the one before, cut just before its
	// newline: the newline was added and the entry kept).
	Action string `json:"action"`
	// Offset is where the torn line starts; Bytes its length; Digest the
	// hex blake3 of its bytes; Torn the bytes themselves (base64 in JSON).
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
	Digest string `json:"digest,omitempty"`
	Torn   []byte `json:"torn,omitempty"`
	// HeadSeq and HeadHash are the last complete entry after the repair.
	HeadSeq  uint64 `json:"head_seq"`
	HeadHash string `json:"head_hash,omitempty"`
}

// Repair makes an embedded ledger appendable again after an append was
// killed part-way, leaving a last line without its newline (Append and
// Retain refuse such a file). Under the append lock it reads the torn
// tail; when the tail is a whole entry chained to the line before, cut
// just before its newline, it adds the newline; otherwise it truncates
// the file to the end of the last complete line. It never removes a
// complete line. Each repair is appended to the repair log beside the
// ledger (path plus ".repairs") with the dropped bytes, before the ledger
// is changed. A file that ends with a newline is left as it is (Action
// "none", nothing logged).
func (c Config) Repair(ctx context.Context, path string) (*RepairReport, error) {
	s, err := openFile(path, c.now())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, unlock, err := s.lockFile(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ledger: stat %s: %w", path, err)
	}
	rep := &RepairReport{At: s.now().UTC().Truncate(time.Microsecond), Action: "none", Offset: fi.Size()}
	start, tail, err := tornTail(f, fi.Size())
	if err != nil || tail == nil {
		return rep, err
	}
	rep.Offset, rep.Bytes, rep.Torn = start, int64(len(tail)), tail
	rep.Digest = events.Sum(tail).String()
	rep.Action = "dropped"
	if start > 0 {
		prev, err := lastLine(f, start)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: the line before the torn one: %v; run ledger verify", errDamaged, path, err)
		}
		if e, _, err := decodeEntry(prev); err == nil {
			rep.HeadSeq, rep.HeadHash = e.Seq, e.Hash
		}
	}
	if e, ok := wholeEntry(tail, rep.HeadSeq, rep.HeadHash); ok {
		rep.Action, rep.HeadSeq, rep.HeadHash = "completed", e.Seq, e.Hash
	}
	if err := logRepair(path+repairSuffix, rep); err != nil {
		return nil, err
	}
	if rep.Action == "completed" {
		_, err = f.Write([]byte("\n"))
	} else {
		err = f.Truncate(start)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: repair %s: %w", path, err)
	}
	return rep, nil
}

// tornTail returns where the last line starts and its bytes when the file
// of size bytes does not end with a newline; nil when it does. It reads at
// most ledgerdb.MaxEntryBytes+1 bytes from the end: a longer tail is not a torn
// append, and is refused.
func tornTail(f *os.File, size int64) (int64, []byte, error) {
	if size == 0 {
		return 0, nil, nil
	}
	n := min(size, int64(ledgerdb.MaxEntryBytes)+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return 0, nil, fmt.Errorf("ledger: read %s: %w", f.Name(), err)
	}
	if buf[n-1] == '\n' {
		return 0, nil, nil
	}
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && n < size {
		return 0, nil, fmt.Errorf("%w: %s: the last line is longer than an entry can be (%d bytes); this is not a torn append, and repair leaves it alone: run ledger verify", errDamaged, f.Name(), ledgerdb.MaxEntryBytes)
	}
	start := size - n + int64(i) + 1
	return start, buf[i+1:], nil
}

// wholeEntry reports whether tail is a complete, intact entry chained to
// the head (headSeq, headHash).
func wholeEntry(tail []byte, headSeq uint64, headHash string) (Entry, bool) {
	e, unknown, err := decodeEntry(tail)
	if err != nil || unknown || checkFields(e) != nil || e.Seq != headSeq+1 || e.Prev != headHash {
		return Entry{}, false
	}
	if canon, err := events.Canonical(json.RawMessage(tail)); err != nil || !bytes.Equal(canon, tail) {
		return Entry{}, false
	}
	if h, err := hashBody(tail); err != nil || h != e.Hash {
		return Entry{}, false
	}
	return e, true
}

// logRepair appends rep to the repair log and makes it durable.
func logRepair(path string, rep *RepairReport) error {
	b, err := events.Canonical(rep)
	if err != nil {
		return err
	}
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if errors.Is(err, errLink) {
		return err
	}
	if err != nil {
		return fmt.Errorf("ledger: repair log: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ledger: repair log %s: %w", path, err)
	}
	return nil
}

// Text writes the report for people.
func (r *RepairReport) Text(w io.Writer) error {
	var b strings.Builder
	switch r.Action {
	case "none":
		b.WriteString("nothing to repair: the ledger ends with a complete line\n")
	case "completed":
		fmt.Fprintf(&b, "completed entry %d, whose newline was cut, at byte %d; logged in the repair log\n", r.HeadSeq, r.Offset)
	default:
		fmt.Fprintf(&b, "dropped a torn last line of %d bytes at byte %d (blake3 %s); logged, with its bytes, in the repair log; head is now seq %d\n", r.Bytes, r.Offset, r.Digest, r.HeadSeq)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
