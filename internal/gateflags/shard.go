package gateflags

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is one shard of a CI matrix, shard I of N; the zero Shard runs
// everything.
type Shard struct{ I, N int }

// ErrBadShard: a shard is not i/n with 0 <= i < n.
var ErrBadShard = errors.New("bad shard")

// ParseShard parses "i/n"; "" is the zero Shard.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%w: -gate.shard (or %s) is %q; want i/n with 0 <= i < n, e.g. 0/4", ErrBadShard, envShard, s)
	}
	return Shard{i, n}, nil
}

// String is "i/n", or "" for the zero Shard.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Skip returns why this shard does not run scenario, or "".
func (s Shard) Skip(scenario string) string {
	if s.N == 0 {
		return ""
	}
	if o := Of(scenario, s.N); o != s.I {
		return fmt.Sprintf("scenario belongs to shard %d/%d; this is shard %s", o, s.N, s)
	}
	return ""
}

// Of is the shard of n that runs scenario: FNV-1a (32 bits) of its name
// modulo n. It is the same on every machine, so every scenario lands in
// exactly one shard of any CI matrix.
func Of(scenario string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(scenario))
	return int(h.Sum32() % uint32(n))
}
