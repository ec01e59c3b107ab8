// Package cassettes records and replays HTTP calls to LLM APIs, so that
// tests and CI run the real code, through the real SDK, against exactly the
// same responses forever. It is the only package that imports go-vcr
// (gopkg.in/dnaeon/go-vcr.v3): go-vcr's cassette format is the file format
// and go-vcr's recorder records; replay is served from the package's own
// index after one parse. It adds a matcher fit for LLM APIs, per-caller
// response copies, redaction, a secret scanner, atomic saves, a content
// digest (cassette_id), a manifest with an append-only history, and a
// record switch for go test.
//
// It is not a general HTTP mocking library and not a fake server.
//
// # Modes and the record switch
//
// [Open] with a zero [Config] replays. Replay never sends a request anywhere:
// there is no transport behind it, so it works inside testing/synctest
// bubbles, and a request the cassette did not record fails with the miss
// error below. The file must end in ".yaml" (go-vcr's naming).
//
// In test binaries (testing.Testing), the package registers two flags,
// as httprr does:
//
//	-cassettes.record=REGEXP   re-record the cassettes whose path matches
//	-cassettes.record-missing  record the cassettes that do not exist yet
//
// They exist only in test binaries that link this package, so name the
// packages whose tests open cassettes (go test ./summarise
// -cassettes.record-missing): go test ./... passes the flag to every test
// binary, and one that does not link the package fails on it. A cassette
// they select is opened in Record mode; plain go test always replays. [Config].Mode: [Record] records unconditionally. Recording sends requests through
// [Config.RealTransport] (http.DefaultTransport when nil) with go-vcr's
// recorder in ModeRecordOnly, and [Cassette.Close] saves. [Redirect] makes a transport
// that sends requests for the API's root to a local fake or a proxy while
// the cassette records the URL the client used, so it replays against the
// real API's URL whatever port the fake had. Interactions are saved sorted
// by what was asked (method, canonical URL, canonical body, then the
// meaningful headers; see Matching), and in arrival order among identical
// requests, so a concurrent pipeline recorded again unchanged gives the
// same bytes, and a changed request changes only its own lines. Replay
// matches by content, so the order never changes what a request is served
// (except among identical requests, which are served in file order). A cassette re-recorded by a flag in a directory
// with a manifest is applied to it (see Applying re-recorded cassettes),
// forced, with the reason "re-recorded with go test -cassettes.record".
//
// A recording never makes a cassette worse. One during which a request
// failed in transport (a dial error, not the caller cancelling it), or
// that captured no interaction, is not saved: Close returns an error
// naming the test and the cause, and an existing file stays byte for byte
// as it was. Under the record switch a cassette is recorded once per go
// test process: the first opening the flags make record records it,
// later openings (by the same test or others, as when
// -cassettes.record='.*' runs over a package whose tests share a
// cassette) replay that recording once it has ended, and an opening while
// it is still being recorded fails with one message naming both tests.
//
// [OpenT](t, path, cfg) opens for a test, fails it on error and closes the
// cassette when the test ends; its errors name the go test line that
// re-records the cassette from that test, from the module root, with the
// package before the flags (go test stops reading packages at the first
// flag it does not know):
// cd MODULE && go test ./pkg -run '^TestX$' -count=1 '-cassettes.record=name\.yaml$'.
// [Config.Hint] replaces that command (see Misses).
//
// # A refresh's test runs
//
// A refresh of a module's cassettes (package cassettes/refresh, and
// go run github.com/codegenie/codegenie/cmd/refresh-cassettes) runs the
// module's own tests, so that it finds and records every cassette through
// the code that owns it. It speaks to those test binaries through two
// environment variables, read once when a test binary starts (never
// outside one):
//
//	CODEGENIE_CASSETTES_LIST=FILE   every Open appends one line of JSON to
//	                                FILE: the cassette's absolute path,
//	                                the path as opened, whether it exists,
//	                                the hosts its requests went to, and
//	                                the API roots Redirect was given in
//	                                the process by then; and a miss in
//	                                replay a line with the cassette's
//	                                path and, when the request differed
//	                                only in the API version its SDK sends
//	                                (MissError.APIVersion), the change
//	                                (a line once, however often it misses)
//	CODEGENIE_CASSETTES_STAGE=DIR   a recording (by the record switch, or
//	                                in Record mode) of a cassette of the
//	                                module is saved to DIR/<its path from
//	                                the module root> instead, leaving the
//	                                cassette and its manifest as they are;
//	                                an Open that replays a cassette whose
//	                                staged copy exists replays that copy
//	                                (no manifest vouches for it: it is
//	                                scanned whole)
//
// The module root is the directory of the go.mod nearest above the test's
// working directory (its package's). They are environment variables, not
// flags, because a test binary fails on a flag that none of its packages
// defines.
//
// # Matching
//
// A request's key is blake3-256 over, in order and each length-prefixed:
//
//   - the method, upper-cased;
//   - the canonical URL: scheme and host lower-cased, default port (:80 for
//     http, :443 for https) dropped, user info and fragment dropped, empty
//     path written "/", query parameters sorted by key (url.Values.Encode)
//     with the values of credential parameters (key, api_key, apikey,
//     access_token, token, sig, signature) replaced by "REDACTED";
//   - the body's kind and its canonical bytes. A body whose
//     Content-Encoding is gzip or deflate is first decoded (bounded as the
//     secret checks decode it; one that cannot be is "undecodable" and its
//     raw bytes). Then a multipart body (a multipart/* Content-Type with a
//     boundary) is "multipart" and the canonical JSON of its parts in
//     order, each its headers (Content-Type and Content-Disposition as
//     mime.FormatMediaType writes them, other values trimmed) and its
//     content ("text" when UTF-8, else "base64"): boundary, preamble and
//     epilogue mean nothing; one that is not well-formed stays bytes.
//     Else "json" and the canonical JSON of events.Canonical (keys
//     sorted, no insignificant whitespace, numbers normalised) without
//     the object members whose value is null, at any depth (see below),
//     or, when the body is empty or not JSON, "bytes" and the body.
//
// An object member whose value is null matches the member absent, in the
// key and in a miss's body diff: the official Ollama client sends
// "options": null where a raw client sends no "options", and other SDKs
// send explicit nulls for what they leave unset. To the APIs this package
// is built for, no request field has a meaning of its own when null:
// Gemini reads JSON by the proto3 JSON mapping, where null is "the
// default value of the field", as absent is; Bedrock's Smithy JSON
// decoder (smithy-go's shape deserializer) skips a structure member whose
// value is null; OpenAI's API reference gives each optional parameter as
// "optional X or null" with the default it takes when absent; Ollama
// decodes with encoding/json, for which null leaves a field as absence
// does; Anthropic's Messages API documents no field where null differs
// from absent, and its SDK sends null only when asked (param.Null). None
// of them takes a JSON merge patch (RFC 7396), where null removes a
// member: a body whose Content-Type is application/merge-patch+json
// keeps its nulls. Null does carry meaning inside free-form JSON these
// APIs pass to the model as data: a tool's JSON Schema ("default": null,
// "const": null), a tool call's arguments or result in the history
// (Gemini's Struct values, Bedrock's documents). There too a null member
// matches its absence, so a request that differs from its recording only
// by such a member replays the recorded answer instead of missing. A
// null that replaces a value (an element of an array, or a member that
// was not null) is a change, and misses.
//
// A recorded interaction with the request's key serves it unless a
// meaningful header is on both sides with different canonical values:
// Anthropic-Version (trimmed), Anthropic-Beta and OpenAI-Beta (the
// comma-separated features, trimmed, sorted and de-duplicated), and
// Content-Type (the media type as mime.FormatMediaType writes it, charset
// lower-cased, and dropped on JSON media types when it is utf-8, since JSON
// is always UTF-8; a multipart boundary dropped, since it is random). A header the recording lacks, or the request lacks, is
// not a miss by itself: other recorders strip Anthropic-Version. Every
// other header is ignored: User-Agent, X-Stainless-* (OS, arch, runtime
// version, package version, timeout, retry count, helper method),
// Idempotency-Key and credentials vary between machines and attempts
// without changing what is asked.
//
// A request is served the first such interaction, in file order, that is
// not busy, so identical requests get their recorded responses in file
// order. An interaction is busy once served, until its response body is
// abandoned before its end because the request's context was cancelled:
// then it is servable again, so a retry after a cancelled read is served
// the response again, as the live API would answer a retried request. By
// default Close reports interactions never served ([ErrUnusedInteractions]);
// [Config.AllowUnused] turns that off.
//
// The cassette's content is parsed, checked, digested, scanned and indexed
// once per process (cached by the blake3 of the file's bytes, so an edited
// file is read anew); each Open keeps only which interactions it served.
//
// # Identical requests
//
// Several recorded interactions can match one request: a pipeline sent
// the same request more than once, from one goroutine or from several at
// once, and the API answered each differently. By default they are
// served in file order as the requests arrive (see Matching), so with
// concurrent senders which goroutine gets which answer depends on
// scheduling.
//
// A request sent with a lane's context (events.Lane.Context) is known by
// its lane: the Seq its fork follows and the lane's name. A recording
// notes it in the request header Codegenie-Lane (as `1 "a"`: that Seq,
// then the name quoted as Go quotes it), which is saved in the cassette
// and never sent to the API, and saves identical requests ordered by
// that header, then in the order each lane sent them.
//
// A request that asks for the assignment by lane
// (harness.Config.AssignByLane asks for it for every request of a Run's
// client) gets a fixed interaction instead of the next one in file order.
// When some interaction with its key notes a lane, the lane's n-th
// request (from 0) with that key gets the n-th such interaction noting
// the same lane. When none does (a recording made without lanes, or by
// another go-vcr user), lanes are ranked by name among the f lanes taken
// from the request's fork (Fork.Lane) when it is sent, a request without
// a lane being the only lane of its own, and the lane of rank r gets, for
// its n-th request with the key, the interaction at position b + n*f + r
// among those with the key in file order, b being the number of them
// already served when the fork sent its first request with the key; that
// does not depend on arrival order as long as every lane of the fork is
// taken before any of them sends and the lanes send as many identical
// requests each. When the interaction the rule names does not exist, is
// busy, or has a conflicting header, the request is served as by
// default. Identical requests ask the same question, so each recorded
// answer is one the API could have given any of them: the rule only
// fixes which lane gets which.
//
// # Misses
//
// A request without a servable match fails with a [*CassetteError] wrapping
// a [*MissError], which unwraps to [ErrInteractionNotFound]: the miss as
// data, for code that checks errors, and as a message. It holds the
// method, the URL and the cassette, and then one of: a header that
// differs, when an interaction with the same key has another value for
// it; that every interaction with the request's key was already served,
// when so (Served; Exhausted when every interaction of the cassette was:
// "cassette exhausted: open it per run", since a [Cassette] serves one
// run, and one opened once and shared by many runs is used up by the
// first); or the nearest recorded interaction with its line and each
// differing part (Diff): method, URL, header, and the body's fields with
// the words that differ in each (or the body's, when it is not JSON). The
// nearest is chosen by content alone, whichever interactions were already
// served, so under concurrent requests it is the one this request was
// meant to be: same method, then same URL, then agreeing meaningful
// headers, then the fewest differing JSON fields, then the fewest
// differing bytes of the canonical bodies (outside their common prefix
// and suffix), then file order. [MissError.Change] identifies the change
// whatever request carries it, so the misses of several requests that one
// change to the code explains can be told to be one.
//
// Two misses say what they are rather than how the request differs. A
// request to a cloud credential or metadata service (the EC2 instance
// metadata service, the ECS and EKS credential endpoints, STS, the SSO
// portal, the GCE metadata server and Google's token endpoint, the Azure
// instance metadata service and Entra ID) is an SDK that found no
// credentials: Credentials says what that SDK needs in replay (a dummy key,
// AWS credentials and a region, set in the test; see docs/PROVIDERS.md),
// and the message never suggests recording again, which cannot help. A
// request that differs from its nearest interaction only in the API
// version its SDK sends (the Anthropic-Version header, a version segment
// of the path such as v1beta, a beta query parameter) is an SDK upgrade
// (APIVersion): the message names the version change once, and Close,
// when every miss was one, refers to it rather than listing the unused
// interactions as a request change.
//
// A miss, and Close's unused interactions, end with the command that
// re-records the cassette when one is known: Config.Hint, or the go test
// line of the test that opened it with [OpenT]. A cassette opened with
// Open and no Hint names none: its caller tells its own (a determinism
// gate names one, and only when recording again is the answer).
// MissError has a RetryableError method that returns false, which clients
// that consult it (aws-sdk-go-v2's retryer) take as not worth retrying:
// the same request would miss again, so one miss is one attempt. Secrets
// are masked in it (see Redaction and secrets).
//
// openai-go and anthropic-sdk-go retry every transport error, twice by
// default with backoff, and let no error say otherwise; they do honour a
// response's X-Should-Retry: false. So a request carrying X-Stainless-*
// headers (which the SDKs Stainless generates send with every request)
// gets its miss as a response instead: status 404, X-Should-Retry:
// false, and a body whose every Read returns the miss error. The SDKs
// read an error status's body at once, so they send the request once and
// return the miss error (openai-go) or an error wrapping it
// (anthropic-sdk-go); errors.Is finds [ErrInteractionNotFound] either way.
// A transport wrapped around the cassette's finds the miss as the
// response body's CassetteMiss() error method. Every other client gets
// the error from RoundTrip.
//
// # Concurrency
//
// A Cassette is safe for concurrent use. Each caller gets a response with
// freshly copied headers and trailers, its own body reader and the
// caller's own request.
//
// # Streaming
//
// Bodies are recorded whole and byte-identical. A replayed stream returns
// at most one frame per Read, so stream consumers, including the SDKs'
// stream APIs, see the frames one by one. The framing is chosen by the
// response's Content-Type (a body with a Content-Encoding is never split):
//
//   - text/event-stream: a frame ends with the first blank line (two line
//     ends in a row, each "\n", "\r" or "\r\n");
//   - application/x-ndjson (and the other JSON Lines types):
//     a frame ends with "\n";
//   - application/vnd.amazon.eventstream: a frame is as long as its
//     prelude says, and is checked: a length past the end of the body or
//     past the AWS SDKs' bounds (16 MiB of payload, 128 KiB of headers),
//     or a prelude or message CRC32 that does not match, is an
//     ErrInvalidCassette at Open (and fails a recording);
//   - application/json, or no type: a body that is a JSON array (Gemini's
//     streamGenerateContent without alt=sse) has a frame per element, from
//     the "[" or "," before it to its end, and one for the closing "]";
//     JSON objects one per line are NDJSON; any other body is one piece.
//
// Reads fail with the context's error once the request's context is done
// (see Matching for what that does to the interaction).
//
// Recording also notes when each frame of a stream arrived: the
// offset, in milliseconds since the request was sent, of the read that
// completed it, in real time: on the system's monotonic clock
// (clock_gettime on Unix, QueryPerformanceCounter on Windows), which a
// testing/synctest bubble does not fake, so a stream recorded inside a
// bubble keeps its real cadence (on other systems a bubble's recording
// keeps offsets of 0). The offsets are kept in one response
// header, X-Codegenie-Frame-Offsets, "1000,1010,...",
// one per frame, non-decreasing, at most 24 h: the cassette stays a plain
// go-vcr cassette, and the cassette digest covers the timing. A cassette
// whose header does not fit its stream is an invalid cassette. Replay
// removes the header from the response and, by [Config].Timing (a
// [Timing]), paces the frames: each Read that begins frame i waits until
// offset i after the request was replayed, or until the request's context
// is done or the body is closed. A frame, or a response delayed by
// [Config.Latency], that is due at or after the request's deadline is not
// delivered: the request ends with its deadline, also when the two fall at
// the same instant of a bubble's fake clock. The default, [TimingAuto],
// paces inside a testing/synctest
// bubble, where the wait advances the bubble's fake clock and costs no wall
// time, so time-to-first-token timeouts, stalls and cancellation mid-stream
// are tested exactly; outside a bubble it delivers every frame at once
// (a goroutine is taken to be in a bubble when time.Now carries no
// monotonic clock reading, which the runtime omits only there).
// [TimingOn] paces in wall time outside a bubble too; [TimingOff] never paces.
// [Recorded].FrameOffsets reads the offsets.
//
// # Re-recording and timing
//
// A recording measures timing: each response's duration and, for a
// stream, when each frame arrived. Measured again, the same answer from
// the same server takes another time: a local fake answers in
// microseconds, or in hundreds of milliseconds on a loaded machine; the
// live API varies by the second. So that an unchanged pipeline
// re-recorded gives the same bytes, and a changed request changes only
// its own lines, a recording saved over a cassette keeps the recorded
// timing of each interaction it repeats (the same request key, status
// and response body; identical ones paired in file order) when every new
// measurement, the duration and each frame offset, is noise around the
// recorded one: within a second of it, or between half and twice it.
// That is the band a determinism gate already replays a recording in
// (harness.Config.Latency's default scales a recorded duration by 0.5 to
// 2, and serves a response recorded at 0 after 1 ms to about 1 s), so a
// measurement inside it tells the gate nothing it does not already try.
// One outside it (a stream that now stalls, an answer that now takes ten
// times as long) is written, and package cassettes/review reports it as a
// timing change, apart from content. A new interaction, or a cassette
// recorded where none was (or into a directory of its own), has the
// timing just measured. Quantising instead would not do: a measurement
// near a step's edge flips between two values however coarse the steps,
// and the offsets' millisecond resolution is what paces a stream's
// time-to-first-token and stall timeouts.
//
// Timing is part of the cassette digest. It is an input of replay
// (Config.Latency, and frame pacing in a bubble), so a cassette whose
// timing changed beyond noise replays differently, and its digest, and
// the goldens pinned to it, should move; a duration edited by hand is
// detected like any other edit. Keeping noise out of the file keeps it
// out of the digest.
//
// # Redaction and secrets
//
// Redaction works on a deep copy at save time; the live request, and the
// response the caller got, are never modified. In the saved copy:
// Authorization, Proxy-Authorization, X-Api-Key, Api-Key, Cookie,
// Set-Cookie, request ids (Request-Id, X-Request-Id), organisation ids and
// trace headers (Traceparent, Tracestate, X-Amzn-Trace-Id,
// X-Cloud-Trace-Context, Cf-Ray, X-B3-*) are replaced by "REDACTED";
// User-Agent, Idempotency-Key and X-Stainless-* request headers are
// dropped; Date becomes "Thu, 01 Jan 1970 00:00:00 GMT"; rate-limit headers
// (Anthropic-Ratelimit-*, X-Ratelimit-*) become "0", or
// "1970-01-01T00:00:00Z" for *-Reset; credential query parameters are
// redacted and user info removed from URLs. A re-record's review therefore
// shows only what the API said differently. The recorded duration (go-vcr's
// duration field) is kept, to a tenth of a second, measured in real time: replay
// uses it for latency (Config.Latency). Timing measured again that is only
// noise is not written (see Re-recording and timing).
//
// Then the serialized bytes are scanned, and so is what they mean: every
// string as yaml.v3 decodes it (aliases and merge keys resolved, escapes
// and !!binary base64 decoded; yaml.v3 writes a string with an invalid
// UTF-8 byte as !!binary), each body decoded from the gzip or deflate
// Content-Encoding the recorder kept (a body in another coding, or one
// that does not decode within 64 MiB, makes the cassette invalid: it could
// not be checked), the content a body's format carries as base64 text,
// decoded (the "bytes" member of each AWS event-stream message payload,
// Bedrock's InvokeModelWithResponseStream chunks, the model's output
// itself; each multipart part, nested ones included, whose
// Content-Transfer-Encoding is base64 or quoted-printable), within what
// the bodies' decoding left of the same 64 MiB (content past it makes the
// cassette invalid too), and URL query values and user-info passwords
// unescaped. Nothing is written (Close returns an error naming the line
// and the kind of secret, never any of its bytes) if either holds any of:
//
//   - [Config.APIKey], when it is at least 8 bytes long;
//   - a credential header (Authorization, Proxy-Authorization, X-Api-Key,
//     Api-Key, Cookie, Set-Cookie) whose value is not a placeholder (a value
//     with no letter or digit, or one that says redacted, filtered, removed
//     or masked);
//   - anything the default ruleset of gitleaks finds, in the file or in a
//     header written as "Name: value": its 222 rules, which among others
//     catch JWTs, PEM private keys, AWS access key ids, GitHub, GitLab,
//     Slack, Stripe (sk_live_, sk_test_, rk_...), Google (AIza...), Hugging
//     Face (hf_), Anthropic and OpenAI keys of their published lengths, and
//     generic "key/token/secret/password = value" assignments with enough
//     entropy (a 32-hex x-api-key, an aws_secret_access_key). The rules are
//     gitleaks v8.30.1's config/gitleaks.toml, applied as gitleaks applies
//     them to a file without a path (see internal/secrets);
//   - anything the package's own rules find, for shapes that ruleset lets
//     through: Google OAuth access tokens (ya29.), Groq keys (gsk_), a
//     password in a URL's user info (scheme://user:password@host), bearer
//     tokens, AWS secret access keys named as such, and Anthropic (sk-ant-),
//     OpenAI (sk-, sk-proj-), Hugging Face (hf_) and GitHub fine-grained
//     (github_pat_) keys of any length, and a value of 8 bytes or more of a
//     credential query parameter (key, api_key, access_token, token, sig,
//     signature, password, ...) that is not a placeholder.
//
// Apply refuses a staged cassette the same scan flags, so a manifest entry
// vouches that its content was scanned. Verify applies the whole scan to
// every cassette; Open applies it to a cassette no manifest entry vouches
// for (one another recorder wrote may hold an X-Api-Key header), and the
// credential-header check to every cassette. A finding is a secret error
// naming the file and line, never the value; Config.APIKey is looked for
// in the text and in what it means at every Open. The ruleset runs once
// per cassette file content in a process. Error messages mask everything
// these rules find, and Config.APIKey wherever it appears, in whole
// bodies before any excerpt is cut from them; [Mask] does the same for
// text a caller prints.
//
// # File format
//
// A cassette is go-vcr's format version 2: YAML with "version: 2" and a
// list of interactions, each a request and a response with go-vcr's fields.
// Save writes exactly what go-vcr's Cassette.Save writes ("---\n" followed
// by gopkg.in/yaml.v3's encoding), so plain go-vcr cassettes and ours are
// interchangeable; it writes atomically (temporary file in the same
// directory, fsync, rename, directory fsync), so a failed or interrupted
// save leaves the previous file as it was. Loading reports invalid or
// truncated YAML, a version other than 2, and interactions without method,
// URL or response code as *CassetteError with the file and the line. The
// one header of our own a request can hold is Codegenie-Lane (see
// Identical requests).
//
// Cassettes other go-vcr users recorded replay through the official
// SDKs with their default options, whatever their recorder left: headers
// in another case, a charset on JSON, keys as "[FILTERED]", bodies
// re-encoded (see Matching). A response recorded without a Content-Type
// (some recorders delete every header) is served with the type its body
// evidently has: JSON, a server-sent-events stream or NDJSON; the body
// alone decides. [Cassette.Notes] says so once per cassette, and [OpenT]
// logs it.
//
// # Cassette digest (cassette_id)
//
// The cassette_id ([Digest]) is the blake3-256 of the cassette's decoded
// content, bodies included by digest: it depends on content, not on YAML
// layout. The cassette's transport reports it through a CassetteID() string
// method, so code that only holds an *http.Client can pin a run to its
// cassette.
//
// # Manifest
//
// A directory of cassettes has a manifest.json listing each cassette with
// its digest, interaction count, model, age limits and whether it is
// pinned, and an append-only history of every change, chained by hash.
// Pinned marks a cassette that a golden digest depends on; [Apply] creates
// entries pinned, and replacing a pinned cassette with different content
// needs [Update.Force] and [Update.Reason] (Apply refuses it otherwise,
// saying the cassette is pinned). Re-recording identical content adds no history (it updates
// the recording time). The byte formats of the digest and of the manifest
// are specified in docs/FORMATS.md.
//
// # Freshness
//
// recorded_at is when a cassette was last recorded, as the recording says,
// never the clock of whoever verifies: [Update].RecordedAt (refresh-cassettes
// passes the time it recorded), else Apply's at when it is an RFC 3339
// time, else, for a cassette re-recorded by the test flag, the latest Date
// header of its responses as the server sent them (before redaction); ""
// when none is known. max_age and hard_max_age are age limits, a Go
// duration or a number of days ("90d"); the manifest's apply to every
// cassette, an entry's override them for that cassette. They are policy:
// edit them by hand; recording keeps them. Past max_age, [Verify]
// writes a warning naming the command that re-records the cassette (a
// cassette with a limit and no recorded_at is warned about too); past
// hard_max_age, Verify fails with [ErrExpired]. Ages are judged at
// [VerifyConfig].Now (time.Now when nil), so a Verify at any instant
// lists the cassettes past their limits then (refresh-cassettes -expired
// re-records them). Open never judges age, so a
// replay's outcome never depends on the clock, and nothing re-records on
// its own.
//
// Open in Replay mode verifies the cassette against [Config.Manifest], or
// manifest.json in the cassette's directory when there is one: a digest
// that differs (a digest mismatch: the file was changed other than by
// recording) or a missing entry is an error. The
// manifest is parsed strictly (one JSON object, no unknown fields, no
// duplicate keys, nothing after it; errors name the line) and, like
// cassettes, checked once per content in a process.
// [Verify] checks a whole directory, and [Apply] moves freshly recorded
// cassettes in and records them.
//
// # Applying re-recorded cassettes
//
// Re-recorded cassettes are written into a staging folder that [NewStage]
// makes in the directory (".refresh-" and a random suffix, holding a
// .gitignore of "*" so git never shows it, and a lock file the making
// process holds while it lives). Apply validates them, writes the new
// manifest ("manifest.json.new") and then a journal ("journal.json":
// {"format": 2, "moves": [{"staged", "file", "sum"}, ...], "check"}, each
// move the staged name, the name in the directory and the blake3 of the
// bytes, the manifest last; check is the hex blake3-256 of the line
// "codegenie cassettes journal" and the canonical JSON of
// {"Format", "Moves"}) into that folder, each atomically; writing the
// journal is the commit point. It then renames each staged file into
// place, removes the journal and the folder. Readers therefore see every
// cassette and the manifest all old, or all new, or a journal: Open and
// Verify report a journal as [ErrInterruptedApply] naming the repair command
// (printed in the error). An Apply that fails after its journal was written
// says which files it had already replaced and what the repair command
// will do, and notes its cause beside the journal ("apply-failed.txt"), so
// that what reports the journal later says the refresh failed and why; a
// journal without that note is reported as a refresh that stopped (killed
// or crashed). One that fails before its journal changed nothing.
//
// [Recover], which Apply and refresh-cassettes run first, rolls a journal
// forward, removes staging folders without a journal (nothing in the
// directory had changed) and the temporary files of interrupted writes of
// the manifest or of a cassette. A journal is untrusted input: before
// anything is moved, every name in it must be a plain file name of its
// kind (a cassette's name ending in .yaml, the manifest's manifest.json;
// no path separator, no leading dot), its check must hold, every staged
// file (or, once moved, the file in the directory) must be a regular file
// with its journalled digest, every cassette must read as one and hold no
// secret, and the staged manifest must list each of them with its digest.
// A journal that fails any of this is refused, naming the file and the
// entry, and nothing is moved. Recover removes only regular files of the
// names a refresh writes: a staging folder holding anything else, or one
// that is a link, is left alone and reported. A staging folder whose lock
// is held belongs to a refresh still running and is left alone too.
//
// One refresh of a directory runs at a time: Apply, Recover, NewStage and
// the save of a cassette recorded by the test flag hold the directory's
// refresh lock (a file in the folder .refresh.lock, which git ignores; an
// advisory lock, flock on Unix and LockFileEx on Windows) while they work,
// and a refresh that stages, reviews and applies several cassettes holds
// it from staging to applying with [LockDir], as refresh-cassettes does
// ([Apply] of a stage made by [DirLock.NewStage] runs under that lock). A
// second refresh waits for the lock for up to a minute, then fails saying
// so; it changed nothing.
//
// # Committed cassettes
//
// testdata/ holds one cassette per fixture scenario and path,
// testdata/<scenario>.<path>.yaml (paths are "happy" and,
// for scenarios with prior attempts, "retry"), and testdata/manifest.json.
// Their owner is package fixtures' TestCassettes, which records them
// through [Redirect] to internal/fakellm with fixtures.NewTier's defaults
// (JSON Messages API, fixtures.DefaultModel, the default base URL): replay
// them with a tier built the same way. They are refreshed like any
// module's cassettes, with go run ./cmd/refresh-cassettes -pkg ./fixtures
// (and -force -reason: golden digests pin them); cmd/refresh-cassettes'
// TestCommittedCassettes proves that path re-records them byte for byte.
package cassettes
