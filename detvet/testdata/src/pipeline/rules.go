package pipeline

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ---- reflect.Value.MapKeys and MapRange ----

func reflectKeys(v reflect.Value) []string {
	var out []string
	for _, k := range v.MapKeys() { // want `\(reflect\.Value\)\.MapKeys returns the map's keys in random order`
		out = append(out, k.String())
	}
	return out
}

func reflectKeysSorted(v reflect.Value) []string {
	keys := v.MapKeys() // tn: sorted below
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}

func reflectIter(v reflect.Value) string {
	var b strings.Builder
	it := v.MapRange() // want `\(reflect\.Value\)\.MapRange iterates the map in random order`
	for it.Next() {
		b.WriteString(it.Key().String())
	}
	return b.String()
}

// ---- sync.Map.Range ----

func syncMapKeys(m *sync.Map) []string {
	var out []string
	m.Range(func(k, v any) bool {
		out = append(out, k.(string)) // want `append to out inside a range over a map`
		return true
	})
	return out
}

func syncMapCount(m *sync.Map) (n int) {
	m.Range(func(k, v any) bool {
		n++ // tn: counting does not depend on order
		return true
	})
	return n
}

func syncMapSorted(m *sync.Map) []string {
	var out []string
	m.Range(func(k, v any) bool {
		out = append(out, k.(string)) // tn: sorted below
		return true
	})
	slices.Sort(out)
	return out
}

// ---- maps.Keys, maps.Values, maps.All ----

func valuesIter(m map[string]int) (out []int) {
	for v := range maps.Values(m) {
		out = append(out, v) // want `append to out inside a range over a map`
	}
	return out
}

func allIter(m map[string]int) string {
	var b strings.Builder
	for k, v := range maps.All(m) {
		fmt.Fprintf(&b, "%s=%d,", k, v) // want `Fprintf writes to &b inside a range over a map`
	}
	return b.String()
}

func keysLoggedOnly(m map[string]int) int {
	for k := range maps.Keys(m) {
		slog.Debug("key", "k", k) // tn: a logger is not an output
	}
	return len(m)
}

// ---- hash/maphash ----

var seed = maphash.MakeSeed() // want `hash/maphash\.MakeSeed hashes with a per-process random seed`

func bucketOf(s string) uint64 {
	var h maphash.Hash
	h.WriteString(s)
	return h.Sum64() // want `\(\*hash/maphash\.Hash\)\.Sum64 hashes with a per-process random seed`
}

func fixedHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64() // tn: a fixed hash
}

// ---- encoding/gob of maps ----

type cacheEntry struct {
	Name   string
	Labels map[string]string
}

func gobKey(e cacheEntry) []byte {
	var buf bytes.Buffer
	_ = gob.NewEncoder(&buf).Encode(e) // want `\(\*encoding/gob\.Encoder\)\.Encode encodes a map`
	return buf.Bytes()
}

type sortedEntry struct {
	Name   string
	Labels []string
}

func gobSorted(e sortedEntry) []byte {
	var buf bytes.Buffer
	_ = gob.NewEncoder(&buf).Encode(e) // tn: no map
	return buf.Bytes()
}

// ---- process state ----

func workers() string {
	return "workers=" + strconv.Itoa(runtime.NumGoroutine()) // want `runtime\.NumGoroutine counts goroutines`
}

func goroutinesLogged() {
	slog.Debug("goroutines", "n", runtime.NumGoroutine()) // tn
}

func goroutineID() string {
	buf := make([]byte, 64)
	n := runtime.Stack(buf, false) // want `runtime\.Stack holds goroutine ids`
	f := strings.Fields(string(buf[:n]))
	return f[1]
}

func selfPath() string {
	exe, _ := os.Executable() // want `os\.Executable differs between processes`
	return filepath.Dir(exe)
}

func configPath() (string, error) {
	dir, err := os.UserConfigDir() // want `os\.UserConfigDir depends on HOME`
	return filepath.Join(dir, "app"), err
}

func homeAndCache() []string {
	home, _ := os.UserHomeDir()   // want `os\.UserHomeDir depends on HOME`
	cache, _ := os.UserCacheDir() // want `os\.UserCacheDir depends on HOME`
	return []string{home, cache}
}

func homeLogged() {
	home, _ := os.UserHomeDir() // tn: only logged
	slog.Info("home", "dir", home)
}

// ---- time zones ----

func localDay(sec int64) string {
	return time.Unix(sec, 0).Format("2006-01-02") // want `\(time\.Time\)\.Format formats a time in the process's local zone`
}

func utcDay(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("2006-01-02") // tn: UTC
}

func localDate(y int) time.Time {
	return time.Date(y, 1, 1, 0, 0, 0, 0, time.Local) // want `time\.Local depends on the process's time zone`
}

func toLocal(t time.Time) string {
	return t.Local().String() // want `\(time\.Time\)\.Local depends on the process's time zone`
}

// ---- the umask ----

func writtenMode(dir string) (string, error) {
	name := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(name, []byte("x"), 0o666); err != nil {
		return "", err
	}
	fi, err := os.Stat(name)
	if err != nil {
		return "", err
	}
	return fi.Mode().String(), nil // want `Mode reads back the mode of a file this code creates`
}

func inputMode(name string) (string, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return "", err
	}
	return fi.Mode().String(), nil // tn: the mode of an input, not of a file written here
}

// ---- unstable sorts ----

type scored struct {
	Name  string
	Score int
}

func byScore(xs []scored) []scored {
	sort.Slice(xs, func(i, j int) bool { return xs[i].Score > xs[j].Score }) // want `sort\.Slice is not stable and its comparator ignores Name`
	return xs
}

func byScoreThenName(xs []scored) []scored {
	sort.Slice(xs, func(i, j int) bool { // tn: every field is compared
		if xs[i].Score != xs[j].Score {
			return xs[i].Score > xs[j].Score
		}
		return xs[i].Name < xs[j].Name
	})
	return xs
}

func byScoreStable(xs []scored) []scored {
	sort.SliceStable(xs, func(i, j int) bool { return xs[i].Score > xs[j].Score }) // tn: stable
	return xs
}

func byLength(names []string) []string {
	slices.SortFunc(names, func(a, b string) int { return len(a) - len(b) }) // want `slices\.SortFunc is not stable and its comparator compares a value derived`
	return names
}

func plainStrings(names []string) []string {
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a, b) }) // tn: equal strings are identical
	return names
}

type byScoreSort []scored

func (s byScoreSort) Len() int           { return len(s) }
func (s byScoreSort) Less(i, j int) bool { return s[i].Score < s[j].Score }
func (s byScoreSort) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }

func sortInterface(xs []scored) []scored {
	sort.Sort(byScoreSort(xs)) // want `sort\.Sort is not stable and its comparator ignores Name`
	return xs
}

func sortedForLog(xs []scored) int {
	local := slices.Clone(xs)
	sort.Slice(local, func(i, j int) bool { return local[i].Score > local[j].Score }) // tn: only logged
	slog.Info("top", "first", local[0].Name)
	return len(xs)
}

// ---- branches on elapsed time ----

func rankWithinBudget(docs []string, budget time.Duration) []string {
	start := time.Now()
	var out []string
	for _, d := range docs {
		if time.Since(start) > budget { // want `branch on elapsed time decides what reaches the output: which side it takes depends on how long the work before it took`
			break
		}
		out = append(out, strings.ToUpper(d))
	}
	return out
}

func slowWarning(ctx context.Context, docs []string) []string {
	start := time.Now()
	out := slices.Clone(docs)
	slices.Sort(out)
	if d := time.Since(start); d > time.Second { // tn: the branch only logs
		slog.WarnContext(ctx, "slow sort", "took", d)
	}
	return out
}

func untilDeadline(deadline time.Time, xs []int) (sum int, partial bool) {
	for _, x := range xs {
		if time.Until(deadline) < 0 { // want `branch on elapsed time decides what reaches the output: which side it takes depends on how long the work before it took`
			return sum, true
		}
		sum += x * x
	}
	return sum, false
}

func subOfNow(start time.Time, prompt string) string {
	if time.Now().Sub(start) >= 2*time.Second { // want `branch on elapsed time decides what reaches the output: which side it takes depends on how long the work before it took`
		return strings.ToLower(prompt)
	}
	return prompt
}

func pastDeadline(deadline time.Time, docs []string) []string {
	if deadline.Before(time.Now()) { // want `branch on elapsed time decides what reaches the output: which side it takes depends on how long the work before it took`
		return docs[:1]
	}
	return docs
}

func slowFlagLogged(xs []int) int {
	start := time.Now()
	n := 0
	for _, x := range xs {
		n += x
	}
	slow := false
	if time.Since(start) > time.Second { // tn: the flag it sets is only logged
		slow = true
	}
	slog.Info("summed", "slow", slow)
	return n
}

func retryWithBackoff(ctx context.Context, call func(context.Context) (string, error)) (string, error) {
	start := time.Now()
	for {
		out, err := call(ctx)
		if err == nil {
			return out, nil
		}
		if time.Since(start) > time.Minute { // tn: the loop sleeps, so a bubble's clock moves and the gate sees this branch
			return "", err
		}
		time.Sleep(time.Second)
	}
}

func processIdentity() string {
	host, _ := os.Hostname()                                               // want `os\.Hostname differs between processes and machines`
	wd, _ := os.Getwd()                                                    // want `os\.Getwd differs between processes and machines`
	return fmt.Sprintf("%s:%d:%s:%s", host, os.Getpid(), wd, os.TempDir()) // want `os\.Getpid differs` `os\.TempDir differs`
}

func processLogged() {
	exe, _ := os.Executable() // tn: only logged
	slog.Debug("started", "exe", exe, "pid", os.Getpid())
}

type walkInfo struct{ pre, post int }

type node struct {
	Name string
	walk walkInfo
	Kids []*node
}

func preorder(nodes []*node) []*node {
	out := slices.Clone(nodes)
	sort.Slice(out, func(i, j int) bool { return out[i].walk.pre < out[j].walk.pre }) // tn: a walk's pre numbers are unique
	return out
}
