package detvet

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// forbidden describes the package-level functions and variables of one
// package that detvet flags.
type forbidden struct {
	category string
	why      string
	// names lists the flagged names; if nil, every package-level function
	// is flagged except those whose name starts with a prefix in except.
	names  []string
	except []string
}

// forbiddenPkgs maps an import path to what is flagged in it.
var forbiddenPkgs = map[string]forbidden{
	"time": {category: CategoryWallClock, names: []string{"Now", "Since", "Until"},
		why: "reads the wall clock; inject a clock (events.Options.Clock, guard.RecordedClock in replay)"},
	"math/rand": {category: CategoryRand, except: []string{"New"},
		why: "draws from the global random source; derive values from the run's inputs, or use a *rand.Rand seeded from them"},
	"math/rand/v2": {category: CategoryRand, except: []string{"New"},
		why: "draws from the global random source; derive values from the run's inputs, or use a *rand.Rand seeded from them"},
	"crypto/rand": {category: CategoryCrypto, except: []string{},
		why: "reads operating-system entropy; inject an ID source (guard.IDSource)"},
	"github.com/google/uuid": {category: CategoryUUID,
		names: []string{"New", "NewString", "NewRandom", "NewUUID", "NewV6", "NewV7", "NewV7FromReader",
			"NewDCESecurity", "NewDCEPerson", "NewDCEGroup"},
		why: "generates a random or time-based UUID; inject an ID source (guard.IDSource)"},
	"github.com/gofrs/uuid": {category: CategoryUUID, names: []string{"NewV1", "NewV4", "NewV6", "NewV7"},
		why: "generates a random or time-based UUID; inject an ID source (guard.IDSource)"},
	"github.com/gofrs/uuid/v5": {category: CategoryUUID, names: []string{"NewV1", "NewV4", "NewV6", "NewV7"},
		why: "generates a random or time-based UUID; inject an ID source (guard.IDSource)"},
	"github.com/satori/go.uuid": {category: CategoryUUID, names: []string{"NewV1", "NewV2", "NewV4"},
		why: "generates a random or time-based UUID; inject an ID source (guard.IDSource)"},
	"github.com/oklog/ulid/v2": {category: CategoryUUID, names: []string{"Make", "Now"},
		why: "generates a time-based ID; inject an ID source (guard.IDSource)"},
	"os": {category: CategoryEnv, names: []string{"Getenv", "LookupEnv", "Environ", "ExpandEnv"},
		why: "reads the environment; pass configuration and API keys in explicitly"},
	"syscall": {category: CategoryEnv, names: []string{"Getenv", "Environ"},
		why: "reads the environment; pass configuration and API keys in explicitly"},
}

// cryptoVars are the package-level variables of crypto/rand that are flagged.
var cryptoVars = map[string]bool{"Reader": true}

// checkIdent flags a use (call or function value) of a forbidden
// package-level function, and of crypto/rand.Reader.
func (c *checker) checkIdent(id *ast.Ident) {
	obj := c.pass.TypesInfo.Uses[id]
	if obj == nil || obj.Pkg() == nil {
		return
	}
	path := obj.Pkg().Path()
	fb, ok := forbiddenPkgs[path]
	if !ok {
		return
	}
	name := obj.Name()
	switch o := obj.(type) {
	case *types.Func:
		if sig, _ := o.Type().(*types.Signature); sig == nil || sig.Recv() != nil {
			return // methods, e.g. of a seeded *rand.Rand, are not flagged
		}
	case *types.Var:
		if path != "crypto/rand" || !cryptoVars[name] || o.Parent() != o.Pkg().Scope() {
			return
		}
	default:
		return
	}
	if !fb.matches(name) {
		return
	}
	c.report(id, fb.category, "%s.%s %s", path, name, fb.why)
}

func (fb forbidden) matches(name string) bool {
	if fb.names != nil {
		for _, n := range fb.names {
			if n == name {
				return true
			}
		}
		return false
	}
	for _, p := range fb.except {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}
