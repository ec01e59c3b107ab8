// Package childproc starts, perturbs, talks to and reaps the child
// processes of a determinism gate: the test binary run again to make one
// run of a scenario in an environment the test process cannot give
// itself. Package harness decides which runs go to children, what a run
// reports and how outcomes are grouped, judged and rendered; this package
// knows nothing of scenarios, outcomes or reports beyond a report's
// [Header].
//
// # Protocol
//
// [Runner.Run] starts the test binary with -test.run anchored to the
// test (each element of t.Name() as ^QuoteMeta(element)$), -test.count=1,
// -test.timeout of twice the child's time limit plus a minute,
// -test.short when the test process has it, and, for the first child of
// a gate ([Child.Discover]), -test.testlogfile, whose "getenv NAME" lines
// name the environment variables the scenario reads. The environment
// variable CODEGENIE_HARNESS_CHILD holds the JSON of a [Spec] (format
// codegenie-harness-child-spec/1): test, scenario, run, GOMAXPROCS, the
// report's path, a random nonce, and the hostname and domain name with
// the test process's UTS namespace when the child has a namespace of its
// own. [Self] reads it in the child, where harness.Check makes that one
// run, writes its report with [Spec.WriteReport] (atomically) and ends
// the test; any other Check in the child returns at once.
//
// The report (format codegenie-harness-child-report/1) is one JSON
// object: the [Header] fields (format, nonce, test, scenario, run), then
// what the run gave, which package harness defines (output, tape, pins,
// requests, error and its kind, leaks, the environment observed). The
// parent reads at most 256 MiB, refuses unknown fields, anything after
// the object, another format, and a test, scenario, run or nonce other
// than its spec's, then has [Report.Check] verify the content. A child
// that exits without a report, outlives its time limit (it is killed with
// its process group), writes anything else or leaves a process running is
// an [*Error] naming the child and its reason: it can never hang or pass
// the gate.
//
// # Leaked processes
//
// A child is the leader of its own process group (Unix), and its
// environment holds a mark, CODEGENIE_HARNESS_CHILD_MARK set to its
// spec's nonce, which every process it starts inherits. When it ends,
// what is left of its group, the processes its scenario started and did
// not wait for, is killed, and so, on Linux, is every process whose
// environment (/proc/PID/environ) holds the mark, whatever session or
// group it moved to (setsid, a daemon's double fork); the search is made
// again until it finds none, each process signalled through a pidfd
// whose mark is checked again, so a reused pid is never killed. The run
// fails as "leaked", naming the processes ("pid 12 (sleep, outside its
// process group)").
//
// The mark was chosen over the alternatives as the one that needs no
// privilege and holds however the child ends. PR_SET_CHILD_SUBREAPER on
// the child makes orphans its children only while it lives, and needs it
// to search and kill before it exits, which a crash, os.Exit in a
// scenario or the kill at its time limit never let it do (a subreaper in
// the test process would collect the orphans of every child and of the
// user's own code alike, with no way to tell whose). A cgroup holds
// every descendant, but making one needs root or a systemd delegation
// that CI containers seldom give. The mark is missed by a process that
// starts a program with an environment of its own (env -i, a setuid
// program, whose environment another user cannot read): such a process
// escapes. macOS has no /proc: there only the group's processes are
// found, and Windows has no process groups: there a child's own
// processes are neither found nor killed; [Planner.Summary] says which.
//
// # Perturbations
//
// A [Plan] says what one child changes, [Planner] plans the children of
// one gate, and each dimension can be tried alone ([Plan.Only]) to trace
// a difference to it:
//
//   - the working directory: base/m, a symbolic link to the module root,
//     and the same package directory below it;
//   - TMPDIR (a fresh directory), TZ (zones with unusual offsets), LANG
//     and LC_ALL, GOMAXPROCS (the run's);
//   - the CPU affinity mask, set on a locked thread that forks the child
//     and then ends with its goroutine (Linux);
//   - the hostname and domain name, in a new UTS namespace (CLONE_NEWUTS,
//     else with a new user namespace mapping the user to root), set by
//     the child itself ([Spec.SetHostname]) only when its namespace is
//     not the test process's (Linux);
//   - the umask (002, 077 or 022, whichever differ from the test
//     process's), set on the forking thread after unshare(CLONE_FS), so
//     the test process keeps its own (Linux);
//   - HOME and the XDG base directories (USERPROFILE, APPDATA and
//     LOCALAPPDATA on Windows): fresh directories holding a copy of each
//     configuration entry the official SDKs read under the test process's
//     home (.aws, the Anthropic and gcloud configuration directories; see
//     Fresh home); GOENV, GOPATH and GOCACHE keep what the test process's
//     home gives them;
//   - PATH, with an empty directory first;
//   - the executable's path: the test binary hard-linked (else copied)
//     into the child's directory and removed when the child ends; where
//     that directory does not allow executing, the binary runs where it
//     is;
//   - each environment variable the first child read, except those the
//     harness sets and those held as configuration: another word, or
//     another absolute path for a path.
//
// # Fresh home
//
// A child's SDK configuration is readable and never writable through to
// the test process's home: the fresh home holds copies, made for each
// child and removed when it ends. A link (to an entry or to each of its
// files) would let an SDK that appends to ~/.aws/credentials, or rewrites
// its SSO cache or gcloud's token database, change the user's file;
// read-only files would fail those writes, which the SDKs make when they
// refresh a token, where the test process's own runs succeed. A copy
// makes the same reads and lands every write in the child's home, and no
// child sees what another wrote. The copies are bounded (1024 files and
// directories and 32 MiB in all) and hold only regular files and
// directories, a symbolic link inside an entry copied as the file it
// leads to in that entry; an entry with any other link (one leaving it,
// to a directory, or dangling) or file, or over the bounds, keeps every
// child in the test process's home, and [Planner.Summary] says why.
// gcloud's logs and virtenv directories, which no SDK reads, are left
// out. Otherwise the summary names the entries copied ("SDK
// configuration: a fresh home holds copies of ...").
//
// What the machine refuses (no tzdata, one CPU, no UTS namespace, no
// unshare, no symbolic links, a noexec temporary directory) is not varied
// and [Planner.Summary] says why. [Inject] makes those refusals happen,
// for tests of how a gate degrades.
package childproc
