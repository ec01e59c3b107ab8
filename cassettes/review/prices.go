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
	"time"
	"unicode/utf8"
)

// The format versions of a price table file: 1, a flat list of models;
// 2, models in provider blocks, each naming the page its prices were
// checked against, when, and what could not be confirmed.
const (
	pricesFormatFlat      = 1
	pricesFormatProviders = 2
)

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
// micro-units of the currency per million tokens. Unconfirmed says why
// the price could not be checked against the provider's published
// pricing page ("" when it was, or when the table does not say).
type ModelPrice struct {
	Model                                string
	Input, Output, CacheRead, CacheWrite int64
	Unconfirmed                          string
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
	Format    int             `json:"format"`
	Currency  string          `json:"currency"`
	Unit      string          `json:"unit"`
	AsOf      string          `json:"as_of"`
	Source    string          `json:"source"`
	Models    []modelJSON     `json:"models"`
	Providers []providerBlock `json:"providers"`
}

// providerBlock is one provider's models in a format-2 table.
type providerBlock struct {
	Provider    string      `json:"provider"`
	Page        string      `json:"page"`
	Read        string      `json:"read"`
	Unconfirmed *string     `json:"unconfirmed"`
	Models      []modelJSON `json:"models"`
}

type modelJSON struct {
	Model       string      `json:"model"`
	Input       json.Number `json:"input"`
	Output      json.Number `json:"output"`
	CacheRead   json.Number `json:"cache_read"`
	CacheWrite  json.Number `json:"cache_write"`
	Unconfirmed *string     `json:"unconfirmed"`
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
	if f.Unit != "per million tokens" {
		return nil, bad(`unit %q, want "per million tokens"`, f.Unit)
	}
	var blocks []providerBlock
	switch f.Format {
	case pricesFormatFlat:
		if f.Providers != nil {
			return nil, bad(`format 1 lists "models", not "providers"`)
		}
		blocks = []providerBlock{{Models: f.Models}}
	case pricesFormatProviders:
		if f.Models != nil {
			return nil, bad(`format 2 lists models in "providers", not in "models"`)
		}
		blocks = f.Providers
	default:
		return nil, bad("format %d, want %d or %d", f.Format, pricesFormatFlat, pricesFormatProviders)
	}
	p := &Prices{Source: name, Currency: f.Currency}
	if name == "built-in" {
		p.Source = "built-in as of " + f.AsOf
	}
	seen := map[string]bool{}
	for bi, blk := range blocks {
		where := fmt.Sprintf("providers[%d] (%s)", bi, blk.Provider)
		var blockWhy string
		if f.Format == pricesFormatProviders {
			switch {
			case blk.Provider == "":
				return nil, bad("%s: no provider", where)
			case !strings.HasPrefix(blk.Page, "https://") || strings.ContainsAny(blk.Page, " \t\n"):
				return nil, bad("%s: page %q is not an https address", where, blk.Page)
			case !isDate(blk.Read):
				return nil, bad("%s: read %q is not a date (YYYY-MM-DD)", where, blk.Read)
			}
			why, err := reason(blk.Unconfirmed)
			if err != nil {
				return nil, bad("%s: unconfirmed: %v", where, err)
			}
			blockWhy = why
		}
		for i, m := range blk.Models {
			if f.Format == pricesFormatFlat {
				where = fmt.Sprintf("models[%d]", i)
			} else {
				where = fmt.Sprintf("providers[%d] (%s) models[%d]", bi, blk.Provider, i)
			}
			if m.Model == "" || seen[m.Model] {
				return nil, bad("%s: empty or repeated model %q", where, m.Model)
			}
			seen[m.Model] = true
			why, err := reason(m.Unconfirmed)
			switch {
			case err != nil:
				return nil, bad("%s (%s): unconfirmed: %v", where, m.Model, err)
			case why != "" && f.Format == pricesFormatFlat:
				return nil, bad("%s (%s): unconfirmed is a field of format 2", where, m.Model)
			case why == "":
				why = blockWhy
			}
			mp := ModelPrice{Model: m.Model, Unconfirmed: why}
			for _, v := range []struct {
				field string
				n     json.Number
				dst   *int64
			}{{"input", m.Input, &mp.Input}, {"output", m.Output, &mp.Output}, {"cache_read", m.CacheRead, &mp.CacheRead}, {"cache_write", m.CacheWrite, &mp.CacheWrite}} {
				micro, err := microUnits(v.n)
				if err != nil {
					return nil, bad("%s (%s): %s: %v", where, m.Model, v.field, err)
				}
				*v.dst = micro
			}
			p.Models = append(p.Models, mp)
		}
	}
	return p, nil
}

// maxReason bounds the reason an entry gives for an unconfirmed price.
const maxReason = 500

// reason reads an "unconfirmed" field: absent is "", present must say
// why, in one line of at most maxReason bytes.
func reason(s *string) (string, error) {
	switch {
	case s == nil:
		return "", nil
	case strings.TrimSpace(*s) == "":
		return "", errors.New("empty: say why the price could not be confirmed")
	case len(*s) > maxReason || strings.ContainsAny(*s, "\n\r") || !utf8.ValidString(*s):
		return "", fmt.Errorf("not one line of valid UTF-8 of at most %d bytes", maxReason)
	}
	return *s, nil
}

// isDate reports whether s is a YYYY-MM-DD date.
func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
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
