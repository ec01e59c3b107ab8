// Package outside is not a pipeline package: nothing in it is reported.
package outside

import (
	"os"
	"time"
)

func Now() time.Time { return time.Now() } // tn

func Key() string { return os.Getenv("KEY") } // tn

func Keys(m map[string]int) (out []string) {
	for k := range m {
		out = append(out, k) // tn
	}
	return out
}
