// Package detvet is a static analyzer (a golang.org/x/tools/go/analysis
// Analyzer) that reports sources of nondeterminism in codegenie's pipeline
// packages before the determinism gate has to catch them at run time.
// cmd/detvet runs it standalone and as a go vet tool; other teams can add
// Analyzer, or an analyzer made by New with their own package pattern, to
// their own drivers.
//
// It is not a proof of determinism: it is a fast, syntactic check with type
// information and a small flow-insensitive dataflow, tuned for zero false
// positives on idiomatic code. The gate remains the authority.
//
// # What is reported
//
// Only in packages whose import path matches Config.Packages (the -pkgs
// flag; DefaultPackages by default) and, unless Config.Tests is set, only in
// non-test, non-generated files:
//
//   - wallclock: time.Now, time.Since, time.Until, called or used as a
//     value (return time.Now leaks the wall clock as surely as a call).
//   - rand: every package-level function of math/rand and math/rand/v2
//     except the constructors (New...). Methods of a *rand.Rand are not
//     reported: a generator with an explicit seed is deterministic if its
//     seed is, and a seed taken from the clock is reported at time.Now.
//   - cryptorand: every package-level function of crypto/rand and uses of
//     crypto/rand.Reader.
//   - uuid: random and time-based UUID and ULID constructors, matched by
//     import path (github.com/google/uuid New, NewString, NewRandom,
//     NewUUID, NewV6, NewV7, NewV7FromReader, NewDCE*; github.com/gofrs/uuid
//     and /v5 NewV1, NewV4, NewV6, NewV7; github.com/satori/go.uuid NewV1,
//     NewV2, NewV4; github.com/oklog/ulid/v2 Make, Now). Name-based UUIDs
//     (NewMD5, NewSHA1) are deterministic and not reported.
//   - env: os.Getenv, os.LookupEnv, os.Environ, os.ExpandEnv,
//     syscall.Getenv, syscall.Environ.
//   - maporder: a range over a map, or over maps.Keys, maps.Values or
//     maps.All, whose body lets the iteration order reach output (below);
//     and slices.Collect or slices.AppendSeq over those iterators when the
//     result is not sorted afterwards.
//   - select: a select statement with two or more communication cases.
//     When several are ready the runtime chooses at random. Every pair of
//     cases is assumed able to be ready at once; the channels are not
//     analyzed.
//   - goappend: a goroutine (a function literal started with go, or passed
//     to a method named Go such as sync.WaitGroup.Go or errgroup.Group.Go)
//     that appends to a slice declared outside it, unless the enclosing
//     function sorts that slice after starting the goroutine.
//   - ignore: a //detvet:ignore directive without a reason.
//
// # Map order
//
// Inside a range over a map, a variable is tainted if it is the key or the
// value, or is assigned (anywhere in the body, to a fixed point) from an
// expression that mentions a tainted variable. The body lets the order
// reach output when it
//
//   - appends a tainted value to a slice declared outside the loop, or
//     stores one into such a slice at an index that does not itself depend
//     on the entry (keys[i] = k; i++), unless the enclosing function later
//     sorts that slice: a call of sort.Strings, Ints, Float64s, Sort,
//     Stable, Slice or SliceStable, of slices.Sort, SortFunc or
//     SortStableFunc, or of any function or method whose name starts with
//     "sort", whose first argument (or receiver) mentions the slice. This
//     is what makes the sorted-keys idiom (collect the keys, sort them,
//     range over them) pass;
//   - writes a tainted value to a writer declared outside the loop: the
//     methods Write, WriteString, WriteByte, WriteRune, Encode, Emit and
//     EmitRaw (strings.Builder, bytes.Buffer, io.Writer, hash.Hash,
//     json.Encoder, the events tape), fmt.Fprint*, io.WriteString,
//     binary.Write, and fmt.Print* and log.Print* to standard output;
//   - returns a tainted value (the first entry wins);
//   - sends a tainted value on a channel;
//   - calls a function-typed variable (yield, a visitor, a report hook)
//     with a tainted argument, as a statement or as the negated condition
//     of an if (if !yield(k, v) { return }); a function variable whose
//     result is used otherwise is taken to be a pure predicate or
//     transformer;
//   - concatenates a tainted string, or accumulates a tainted
//     floating-point value, into a variable declared outside the loop
//     (floating-point addition is not associative, so the rounding depends
//     on the order; integer sums are not reported);
//   - assigns a tainted value to a variable declared outside the loop
//     either unconditionally (the last entry wins) or in a loop that can
//     break (the first entry wins).
//
// Not reported: summing or counting integers, copying into another map
// (including dst[k] = append(dst[k], ...) under the loop's own key),
// deleting, a conditional assignment in a loop without break (maximum,
// lookup by key), re-slicing a buffer (buf = buf[n:]), stores at an index
// that depends on the entry, writes of values that do not depend on the
// entry, and writers, builders and slices declared inside the loop body.
//
// # Limits
//
// The dataflow is intraprocedural, flow-insensitive and SSA-free. Known
// misses (false negatives), each pinned by a case in
// testdata/src/limits:
//
//   - order that escapes through a call: passing a tainted value to a
//     function that writes it, or collecting into a slice in a helper;
//   - control dependence: for k := range m { if k == "a" { fmt.Fprintln(w,
//     "A") } else { fmt.Fprintln(w, "B") } } writes the entries' order
//     through branches, not through values, and is missed;
//   - argmax with ties inside a conditional (if v > best { best, name = v,
//     k }) is not reported, although ties make name order-dependent;
//   - copying into another map under a key computed from the entry
//     (m2[f(k)] = v) can collide, and the last write wins; not reported;
//   - aliasing: a slice is matched by its spelling, so one sorted under
//     another name is reported although it is sorted (a false positive);
//   - the sort is recognised anywhere after the loop in the same function,
//     even on a path that does not reach the use; a slice returned
//     unsorted to a caller that sorts it is reported (suppress it);
//   - goroutines that write shared state other than by append (a channel
//     send, a writer) are not reported, nor are time.After, timers and
//     tickers.
//
// Known false positives: a conditional map-order assignment in a loop
// with break that really picks a unique entry; a select whose cases can
// never be ready together. Suppress them with a reason.
//
// # Suppression
//
// A comment
//
//	//detvet:ignore <reason>
//
// on the line of a finding, or alone on the line above it, suppresses every
// finding on that line. The reason is required: a bare //detvet:ignore
// suppresses nothing and is itself reported. Unused directives are not
// reported.
package detvet
