package review

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strings"
)

// pricesFormat is the format version of a price table file.
const pricesFormat = 1

// errInvalidPrices is wrapped by every error about a price table.
var errInvalidPrices = errors.New("invalid price table")

//go:embed prices.json
var defaultPrices []byte

// Prices is a price table: what a million tokens of each kind cost per
// model, in micro-units of Currency (so $3 is 3000000). Its file format is
// specified in the package documentation.
type Prices struct {
	// Source names where the table came from: "built-in as of <date>" or
	// the file's path.
	Source   string
	Currency string
	Models   []ModelPrice
}

// ModelPrice is the price of one model (and of its dated variants: an
// entry "claude-sonnet-4-5" prices "claude-sonnet-4-5-20250929"), in
// micro-units of the currency per million tokens.
type ModelPrice struct {
	Model                                string
	Input, Output, CacheRead, CacheWrite int64
}

// DefaultPrices returns the built-in table, committed as prices.json
// beside this package's source.
func DefaultPrices() *Prices {
	p, err := parsePrices("built-in", defaultPrices)
	if err != nil {
		panic(err) // unreachable: a test reads the committed file
	}
	return p
}

// maxPricesBytes bounds a price table file.
const maxPricesBytes = 1 << 20

// ReadPrices reads a price table file.
func ReadPrices(path string) (*Prices, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidPrices, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPricesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errInvalidPrices, path, err)
	}
	if len(b) > maxPricesBytes {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", errInvalidPrices, path, maxPricesBytes)
	}
	return parsePrices(path, b)
}

type pricesFile struct {
	Format   int         `json:"format"`
	Currency string      `json:"currency"`
	Unit     string      `json:"unit"`
	AsOf     string      `json:"as_of"`
	Source   string      `json:"source"`
	Models   []modelJSON `json:"models"`
}

type modelJSON struct {
	Model      string      `json:"model"`
	Input      json.Number `json:"input"`
	Output     json.Number `json:"output"`
	CacheRead  json.Number `json:"cache_read"`
	CacheWrite json.Number `json:"cache_write"`
}

func parsePrices(name string, b []byte) (*Prices, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s; see the price table format in the documentation of package review", errInvalidPrices, name, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f pricesFile
	if err := dec.Decode(&f); err != nil {
		return nil, bad("%v", err)
	}
	if dec.More() {
		return nil, bad("data after the JSON object")
	}
	if f.Format != pricesFormat {
		return nil, bad("format %d, want %d", f.Format, pricesFormat)
	}
	if f.Unit != "per million tokens" {
		return nil, bad(`unit %q, want "per million tokens"`, f.Unit)
	}
	p := &Prices{Source: name, Currency: f.Currency}
	if name == "built-in" {
		p.Source = "built-in as of " + f.AsOf
	}
	seen := map[string]bool{}
	for i, m := range f.Models {
		if m.Model == "" || seen[m.Model] {
			return nil, bad("models[%d]: empty or repeated model %q", i, m.Model)
		}
		seen[m.Model] = true
		mp := ModelPrice{Model: m.Model}
		for _, v := range []struct {
			field string
			n     json.Number
			dst   *int64
		}{{"input", m.Input, &mp.Input}, {"output", m.Output, &mp.Output}, {"cache_read", m.CacheRead, &mp.CacheRead}, {"cache_write", m.CacheWrite, &mp.CacheWrite}} {
			micro, err := microUnits(v.n)
			if err != nil {
				return nil, bad("models[%d] (%s): %s: %v", i, m.Model, v.field, err)
			}
			*v.dst = micro
		}
		p.Models = append(p.Models, mp)
	}
	return p, nil
}

// microUnits converts a decimal price (absent: 0) to exact micro-units.
func microUnits(n json.Number) (int64, error) {
	if n == "" {
		return 0, nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || r.Sign() < 0 {
		return 0, fmt.Errorf("%q is not a non-negative number", n)
	}
	r.Mul(r, big.NewRat(1_000_000, 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("%q has more than 6 decimals or is too large", n)
	}
	return r.Num().Int64(), nil
}

// Lookup returns the price of model: the entry named exactly so, else the
// longest entry m such that model is m followed by "-" and more (a dated
// or suffixed variant); else, for a model whose first dot-separated label
// is only lowercase letters and dashes (a Bedrock model id such as
// us.anthropic.claude-sonnet-4-5-20250929-v1:0: a geographic inference
// profile, then the provider), the price of the rest, so a Bedrock model
// is priced as its provider lists it unless the table names the full id.
func (p *Prices) Lookup(model string) (ModelPrice, bool) {
	for {
		if m, ok := p.lookup(model); ok {
			return m, true
		}
		label, rest, ok := strings.Cut(model, ".")
		if !ok || label == "" || strings.ContainsFunc(label, func(r rune) bool { return (r < 'a' || r > 'z') && r != '-' }) {
			return ModelPrice{}, false
		}
		model = rest
	}
}

func (p *Prices) lookup(model string) (ModelPrice, bool) {
	var best ModelPrice
	found := false
	for _, m := range p.Models {
		if m.Model == model {
			return m, true
		}
		if strings.HasPrefix(model, m.Model+"-") && len(m.Model) > len(best.Model) {
			best, found = m, true
		}
	}
	return best, found
}

// Cost is what u costs at mp, in micro-units of the currency, rounded down;
// it saturates at math.MaxInt64.
func (mp ModelPrice) Cost(u Usage) int64 {
	total := new(big.Int)
	for _, t := range []struct{ n, price int64 }{{u.Input, mp.Input}, {u.Output, mp.Output}, {u.CacheRead, mp.CacheRead}, {u.CacheWrite, mp.CacheWrite}} {
		total.Add(total, new(big.Int).Mul(big.NewInt(max(t.n, 0)), big.NewInt(t.price)))
	}
	total.Quo(total, big.NewInt(1_000_000))
	if !total.IsInt64() {
		return math.MaxInt64
	}
	return total.Int64()
}

// addSat adds without overflow.
func addSat(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
