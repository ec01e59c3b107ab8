package detvet

import (
	"fmt"
	"go/types"
	"strings"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// rule is what detvet says about one source of nondeterminism.
type rule struct {
	category string
	why      string
}

const (
	whyClock   = "reads the wall clock; inject a clock (events.Config.Clock, guard.RecordedClock in replay)"
	whyRand    = "draws from the global random source; derive values from the run's inputs, or use a *rand.Rand seeded from them"
	whyCrypto  = "reads operating-system entropy; inject an ID source (guard.IDSource)"
	whyUUID    = "generates a random or time-based UUID; inject an ID source (guard.IDSource)"
	whyULID    = "generates a time-based ID; inject an ID source (guard.IDSource)"
	whyEnv     = "reads the environment; pass configuration and API keys in explicitly"
	whyHome    = "depends on HOME and the XDG variables of the process; pass the directory in explicitly"
	whyProcess = "differs between processes and machines; keep it out of the output, or pass it in explicitly"
	whyStack   = "holds goroutine ids and addresses, which differ between runs; do not parse or keep it"
	whyHash    = "hashes with a per-process random seed; use a fixed hash (hash/fnv, crypto/sha256) for anything kept or compared"
	whyZone    = "depends on the process's time zone (TZ); use UTC (t.UTC()) or an explicit *time.Location"
)

// sourceFuncs maps "importpath.Name" of a package-level function to its
// rule. math/rand, math/rand/v2 and crypto/rand are matched by package in
// funcRule.
var sourceFuncs = map[string]rule{
	"time.Now":   {catWallClock, whyClock},
	"time.Since": {catWallClock, whyClock},
	"time.Until": {catWallClock, whyClock},

	"github.com/google/uuid.New":             {catUUID, whyUUID},
	"github.com/google/uuid.NewString":       {catUUID, whyUUID},
	"github.com/google/uuid.NewRandom":       {catUUID, whyUUID},
	"github.com/google/uuid.NewUUID":         {catUUID, whyUUID},
	"github.com/google/uuid.NewV6":           {catUUID, whyUUID},
	"github.com/google/uuid.NewV7":           {catUUID, whyUUID},
	"github.com/google/uuid.NewV7FromReader": {catUUID, whyUUID},
	"github.com/google/uuid.NewDCESecurity":  {catUUID, whyUUID},
	"github.com/google/uuid.NewDCEPerson":    {catUUID, whyUUID},
	"github.com/google/uuid.NewDCEGroup":     {catUUID, whyUUID},
	"github.com/gofrs/uuid.NewV1":            {catUUID, whyUUID},
	"github.com/gofrs/uuid.NewV4":            {catUUID, whyUUID},
	"github.com/gofrs/uuid.NewV6":            {catUUID, whyUUID},
	"github.com/gofrs/uuid.NewV7":            {catUUID, whyUUID},
	"github.com/gofrs/uuid/v5.NewV1":         {catUUID, whyUUID},
	"github.com/gofrs/uuid/v5.NewV4":         {catUUID, whyUUID},
	"github.com/gofrs/uuid/v5.NewV6":         {catUUID, whyUUID},
	"github.com/gofrs/uuid/v5.NewV7":         {catUUID, whyUUID},
	"github.com/satori/go.uuid.NewV1":        {catUUID, whyUUID},
	"github.com/satori/go.uuid.NewV2":        {catUUID, whyUUID},
	"github.com/satori/go.uuid.NewV4":        {catUUID, whyUUID},
	"github.com/oklog/ulid/v2.Make":          {catUUID, whyULID},
	"github.com/oklog/ulid/v2.Now":           {catUUID, whyULID},

	"os.Getenv":        {catEnv, whyEnv},
	"os.LookupEnv":     {catEnv, whyEnv},
	"os.Environ":       {catEnv, whyEnv},
	"os.ExpandEnv":     {catEnv, whyEnv},
	"syscall.Getenv":   {catEnv, whyEnv},
	"syscall.Environ":  {catEnv, whyEnv},
	"os.UserHomeDir":   {catEnv, whyHome},
	"os.UserConfigDir": {catEnv, whyHome},
	"os.UserCacheDir":  {catEnv, whyHome},

	"runtime.NumGoroutine": {catProcess, "counts goroutines, which depends on scheduling and on what else runs; keep it out of the output"},
	"os.Executable":        {catProcess, whyProcess},
	"os.Hostname":          {catProcess, whyProcess},
	"os.Getpid":            {catProcess, whyProcess},
	"os.Getwd":             {catProcess, whyProcess},
	"os.TempDir":           {catProcess, whyProcess},
	"runtime.Stack":        {catProcess, whyStack},
	"runtime/debug.Stack":  {catProcess, whyStack},

	"hash/maphash.MakeSeed":        {catMapHash, whyHash},
	"hash/maphash.Bytes":           {catMapHash, whyHash},
	"hash/maphash.String":          {catMapHash, whyHash},
	"hash/maphash.Comparable":      {catMapHash, whyHash},
	"hash/maphash.WriteComparable": {catMapHash, whyHash},
	"(*hash/maphash.Hash).Sum64":   {catMapHash, whyHash},
	"(*hash/maphash.Hash).Sum":     {catMapHash, whyHash},
	"(time.Time).Local":            {catZone, whyZone},
	"(reflect.Value).MapKeys":      {catMapOrder, "returns the map's keys in random order; sort them before use"},
	"(reflect.Value).MapRange":     {catMapOrder, "iterates the map in random order; collect and sort the keys first"},
}

// fills lists the sources that write their result into their first
// argument rather than return it.
var fills = map[string]bool{"crypto/rand.Read": true, "math/rand.Read": true, "runtime.Stack": true}

// funcKey returns the key of fn in sourceFuncs.
func funcKey(fn *types.Func) string {
	if fn.Pkg() == nil {
		return ""
	}
	if recv := fn.Signature().Recv(); recv != nil {
		t := recv.Type()
		ptr := ""
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), "*"
		}
		n, ok := t.(*types.Named)
		if !ok || n.Obj().Pkg() == nil {
			return ""
		}
		return "(" + ptr + n.Obj().Pkg().Path() + "." + n.Obj().Name() + ")." + fn.Name()
	}
	return fn.Pkg().Path() + "." + fn.Name()
}

// funcRule returns the rule for a function or method, if it is a source.
func funcRule(fn *types.Func) (rule, bool) {
	if fn == nil || fn.Pkg() == nil {
		return rule{}, false
	}
	key := funcKey(fn)
	if r, ok := sourceFuncs[key]; ok {
		return r, true
	}
	if fn.Signature().Recv() != nil {
		return rule{}, false // methods of a seeded *rand.Rand are deterministic
	}
	switch fn.Pkg().Path() {
	case "math/rand", "math/rand/v2":
		if !strings.HasPrefix(fn.Name(), "New") {
			return rule{catRand, whyRand}, true
		}
	case "crypto/rand":
		return rule{catCrypto, whyCrypto}, true
	}
	return rule{}, false
}

// globalRule returns the rule for a package-level variable, if reading it
// is a source.
func globalRule(v *types.Var) (rule, bool) {
	if v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return rule{}, false
	}
	switch v.Pkg().Path() + "." + v.Name() {
	case "crypto/rand.Reader":
		return rule{catCrypto, whyCrypto}, true
	case "time.Local":
		return rule{catZone, whyZone}, true
	}
	return rule{}, false
}
