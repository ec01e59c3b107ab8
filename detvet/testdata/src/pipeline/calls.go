// Package pipeline is detvet's test corpus. Every expectation comment is a
// true positive; every line marked tn is a true negative that a careless
// analyzer would report.
package pipeline

import (
	crand "crypto/rand"
	"io"
	"math/big"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"time"

	"github.com/google/uuid"
)

func wallClock() time.Duration {
	start := time.Now()      // want `time\.Now reads the wall clock`
	_ = time.Until(start)    // tn: discarded, it reaches no output
	return time.Since(start) // want `time\.Since reads the wall clock`
}

// defaultClock hands out time.Now as a value: the wall clock still leaks.
func defaultClock(clock func() time.Time) func() time.Time {
	if clock == nil {
		return time.Now // want `time\.Now reads the wall clock`
	}
	return clock
}

// notAClock builds times from its input; no clock is read.
func notAClock(sec int64) time.Time {
	t := time.Unix(sec, 0)                                             // tn
	return t.Add(time.Duration(sec) * time.Second).Truncate(time.Hour) // tn
}

func globalRand() int {
	n := rand.Intn(10)                                  // want `math/rand\.Intn draws from the global random source`
	rand.Shuffle(n, func(i, j int) {})                  // tn: the swap does nothing
	return n + randv2.IntN(5) + int(randv2.N[int64](3)) // want `math/rand/v2\.IntN` `math/rand/v2\.N`
}

func shuffle(xs []string) {
	rand.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] }) // want `math/rand\.Shuffle`
}

// seededRand uses generators with explicit seeds: deterministic.
func seededRand(seed int64) int {
	r := rand.New(rand.NewSource(seed))              // tn
	r2 := randv2.New(randv2.NewPCG(uint64(seed), 1)) // tn
	return r.Intn(10) + r2.IntN(10)                  // tn
}

func cryptoRand(b []byte) (*big.Int, error) {
	_, _ = crand.Read(b)                           // want `crypto/rand\.Read reads operating-system entropy`
	_ = crand.Text()                               // tn: discarded
	_, _ = io.ReadFull(crand.Reader, b)            // want `crypto/rand\.Reader`
	return crand.Int(crand.Reader, big.NewInt(10)) // want `crypto/rand\.Int` `crypto/rand\.Reader`
}

func ids() []string {
	a := uuid.New()                                                       // want `github\.com/google/uuid\.New generates a random or time-based UUID`
	b, _ := uuid.NewRandom()                                              // want `uuid\.NewRandom`
	c, _ := uuid.NewV7()                                                  // want `uuid\.NewV7`
	return []string{a.String(), b.String(), c.String(), uuid.NewString()} // want `uuid\.NewString`
}

// nameBased derives UUIDs from names: deterministic.
func nameBased(ns uuid.UUID, name string) string {
	return uuid.NewSHA1(ns, []byte(name)).String() + uuid.NewMD5(ns, []byte(name)).String() // tn
}

func env() string {
	v, _ := os.LookupEnv("X")                 // want `os\.LookupEnv reads the environment`
	_ = os.Environ()                          // tn: discarded
	return os.Getenv("ANTHROPIC_API_KEY") + v // want `os\.Getenv reads the environment`
}

// notEnv uses os for files only.
func notEnv(name string) error {
	_, err := os.Stat(name) // tn
	return err
}
