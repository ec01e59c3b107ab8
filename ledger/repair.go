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
// tail; when the tail is a whole entry of any schema, sealed and chained
// to the line before, cut just before its newline, it adds the newline;
// otherwise it truncates the file to the end of the last complete line.
// It never removes a complete line. Each repair is appended to the repair
// log beside the ledger (path plus ".repairs") with the dropped bytes,
// before the ledger is changed. A file that ends with a newline is left
// as it is (Action "none", nothing logged).
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
		if sf, ok := readSeal(prev); ok {
			rep.HeadSeq, rep.HeadHash = sf.Seq, sf.Hash
		}
	}
	if sf, ok := wholeEntry(tail, rep.HeadSeq, rep.HeadHash); ok {
		rep.Action, rep.HeadSeq, rep.HeadHash = "completed", sf.Seq, sf.Hash
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

// sealFields are the members that seal an entry of any schema, read
// leniently: whatever else a newer schema adds, an entry states its
// schema, its seq, the previous entry's hash and its own.
type sealFields struct {
	Schema int    `json:"schema"`
	Seq    uint64 `json:"seq"`
	Prev   string `json:"prev"`
	Hash   string `json:"hash"`
}

// readSeal reads the seal of a stored line; ok is false when the line is
// not a JSON object stating a schema, a seq and a hash of 64 hex digits.
func readSeal(body []byte) (sf sealFields, ok bool) {
	if len(body) > ledgerdb.MaxEntryBytes || json.Unmarshal(body, &sf) != nil {
		return sealFields{}, false
	}
	return sf, sf.Schema >= 1 && sf.Seq > 0 && isHexDigest(sf.Hash)
}

// wholeEntry reports whether tail is a complete entry of any schema,
// sealed and chained to the head (headSeq, headHash): the seq after the
// head's, prev the head's hash, canonical bytes, and a hash that matches
// them. Its other fields are not judged: a sealed line is a complete line,
// which repair never removes, and Verify reports what else is wrong.
func wholeEntry(tail []byte, headSeq uint64, headHash string) (sealFields, bool) {
	sf, ok := readSeal(tail)
	if !ok || sf.Seq != headSeq+1 || sf.Prev != headHash {
		return sealFields{}, false
	}
	if canon, err := events.Canonical(json.RawMessage(tail)); err != nil || !bytes.Equal(canon, tail) {
		return sealFields{}, false
	}
	if h, err := hashBody(tail); err != nil || h != sf.Hash {
		return sealFields{}, false
	}
	return sf, true
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
