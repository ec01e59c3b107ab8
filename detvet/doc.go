// Package detvet is a static analyzer (a golang.org/x/tools/go/analysis
// Analyzer) that reports sources of nondeterminism whose values can reach a
// pipeline's output, before the determinism gate has to catch them at run
// time. cmd/detvet runs it standalone (go run .../cmd/detvet checks ./... of
// the module in the current directory) and as a go vet tool; other teams
// can add [Analyzer], or an analyzer made by [New], to their own drivers.
//
// It is not a proof of determinism: it is a fast check with type
// information, a value flow over the package's SSA form and a small
// syntactic dataflow for map order, tuned for zero false positives on
// idiomatic code. The gate remains the authority.
//
// # What is reported
//
// Only in packages [Config] selects (the -pkgs flag; by default every
// package, except that in codegenie's own module only [DefaultPackages]) and,
// unless Config.Tests is set, only in non-test, non-generated files. A
// source is reported only when its value can reach an output (below):
//
//   - wallclock: time.Now, time.Since, time.Until, called or used as a
//     value (return time.Now leaks the wall clock as surely as a call).
//   - latency: a branch whose condition compares elapsed time with a
//     threshold (time.Since(start) > budget, time.Until(d) < 0, a
//     time.Time's After or Before of the clock) when what the branch
//     decides reaches an output: which side it takes depends on how long
//     the work before it took, not on the inputs. The gate cannot see it:
//     in its testing/synctest bubbles time moves only when every
//     goroutine blocks, so a branch on the time CPU work took takes the
//     same side in every run and passes, while production takes the
//     other. The fix is to bound the work by a count, or by a context
//     deadline checked at blocking calls, or to inject the clock. A branch that only logs is not reported, nor
//     one in a function that itself sleeps, waits on a timer or ticker,
//     receives or selects: there the elapsed time is the waiting's, which
//     a gate's replayed latency varies, and the gate sees both sides.
//   - rand: every package-level function of math/rand and math/rand/v2
//     except the constructors (New...). Methods of a *rand.Rand are not
//     reported: a generator with an explicit seed is deterministic if its
//     seed is, and a seed taken from the clock is reported at time.Now.
//     rand.Shuffle is followed into its swap function.
//   - cryptorand: every package-level function of crypto/rand and uses of
//     crypto/rand.Reader (what it fills is followed).
//   - uuid: random and time-based UUID and ULID constructors, matched by
//     import path (github.com/google/uuid New, NewString, NewRandom,
//     NewUUID, NewV6, NewV7, NewV7FromReader, NewDCE*; github.com/gofrs/uuid
//     and /v5 NewV1, NewV4, NewV6, NewV7; github.com/satori/go.uuid NewV1,
//     NewV2, NewV4; github.com/oklog/ulid/v2 Make, Now). Name-based UUIDs
//     (NewMD5, NewSHA1) are deterministic and not reported.
//   - env: os.Getenv, os.LookupEnv, os.Environ, os.ExpandEnv,
//     syscall.Getenv, syscall.Environ, and os.UserHomeDir, UserConfigDir
//     and UserCacheDir (which read HOME and the XDG variables).
//   - process: runtime.NumGoroutine; runtime.Stack and
//     runtime/debug.Stack (goroutine ids and addresses); os.Executable,
//     os.Hostname, os.Getpid, os.Getwd and os.TempDir.
//   - maphash: hash/maphash.MakeSeed, Bytes, String, Comparable,
//     WriteComparable and (*maphash.Hash).Sum64 and Sum: maphash seeds are
//     random per process, and none can be made deterministic.
//   - gob: (*gob.Encoder).Encode of a value holding a map (gob writes map
//     entries in iteration order); the encoder's writer is followed.
//   - timezone: reads of time.Local, t.Local(), and the zone-dependent
//     methods (Format, String, Date, Hour, Zone, MarshalJSON, ...) of a
//     time made by time.Unix, UnixMilli or UnixMicro, which are local.
//   - umask: fs.FileInfo.Mode in a function that creates files or
//     directories (os.Create, WriteFile, OpenFile, Mkdir, MkdirAll,
//     CreateTemp, MkdirTemp): the mode read back is the one the umask left.
//   - maporder: a range over a map, or over maps.Keys, maps.Values or
//     maps.All, and the callback of sync.Map.Range, whose body lets the
//     iteration order reach output (below); slices.Collect or
//     slices.AppendSeq over those iterators when the result is not sorted
//     afterwards; and reflect.Value.MapKeys and MapRange unless the keys
//     are sorted.
//   - unstablesort: sort.Slice, sort.Sort or slices.SortFunc whose
//     comparator can tie on different elements, when the sorted slice
//     reaches an output. These sorts are not stable, so tied elements come
//     out in the order the algorithm leaves them, which may change with
//     the Go release. For a struct element: the comparator reads some
//     fields and not others, and none it reads is a string or named like
//     an identifier or ordinal (…ID, …Key, …Seq, …Index, …Iter, …Run,
//     …Version, …Pos, …Order, pre, post), which are taken to be unique. For a plain element: the
//     comparator compares a value derived from the elements (len(a),
//     strings.ToLower(a)) and never the elements themselves.
//     sort.SliceStable, sort.Stable and slices.SortStableFunc are not
//     reported.
//   - select: a select statement with two or more communication cases
//     that can be ready together, when which case runs can reach an output
//     (a case returns a value, assigns a variable declared outside it,
//     sends, or calls anything but a logger). Cases that cannot be ready
//     together: one on a nil channel or on context.Background().Done()
//     (never ready), and receives from channels made in the function that
//     only one goroutine, started once there, sends on or closes, at most
//     once on any path (the "result or error" shape).
//   - goappend: a goroutine (a function literal started with go, or passed
//     to a method named Go such as sync.WaitGroup.Go or errgroup.Group.Go)
//     that appends to a slice declared outside it, unless the enclosing
//     function sorts that slice after starting the goroutine, or the
//     goroutine is started once (not in a loop) and nothing else in the
//     enclosing function appends to that slice (the appends then follow
//     the goroutine's own order).
//   - ignore: a //detvet:ignore directive without a reason.
//
// # Outputs
//
// A value is followed through the SSA form of its package (assignments,
// arithmetic, conversions, fields, slices, maps, closures and the
// functions of the same package) to where it can be observed. It reaches
// an output when it
//
//   - is returned by an exported function, a method, a closure or a
//     function used as a value; a result of an unexported function counts
//     when one of its call sites passes it on to an output;
//   - is stored into memory the caller can see (through a parameter), or
//     into a package-level variable;
//   - is passed to a function or method of another module or another
//     package (an event tape's Emit, an SDK's params, a request builder),
//     or to a function value (a callback, yield);
//   - is written into a writer, buffer, hash, encoder or header that itself
//     reaches an output (fmt.Fprint*, io.Copy, Write methods), into a
//     file (os.WriteFile, or a handle from os.Create, OpenFile or
//     CreateTemp, directly or through a buffered writer) or a request
//     (http.Client.Do, http.Get, http.Post);
//   - is sent on a channel.
//
// It does not reach an output when it only goes to a logger or to
// telemetry (log, log/slog, expvar, runtime/trace, zap, logrus, zerolog,
// logr, OpenTelemetry, Prometheus, fmt.Fprint* or a Write to os.Stderr,
// testing's Log and Error methods), when it only decides when something
// happens (a context deadline or timeout, a timer, a ticker, a sleep), or
// when it goes nowhere.
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
// The map-order dataflow is intraprocedural, flow-insensitive and
// syntactic; the output flow is per package, field-insensitive and
// ignores control dependence except for the latency rule. Known misses
// (false negatives), each pinned by a case in testdata/src/limits:
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
//     tickers;
//   - an unstable sort whose comparator reads a string or identifier-like
//     field that is not in fact unique is not reported; one whose numeric
//     key is unique under another name is (suppress it).
//
// Known false positives: a conditional map-order assignment in a loop
// with break that really picks a unique entry; a select whose cases cannot
// be ready together for a reason other than those above. Suppress them
// with a reason. The flow assumes the worst of what it cannot see: a value
// passed to another package's function is an output even if that function
// only logs it.
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
