package rag_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"

	"github.com/codegenie/codegenie/rag"
)

func ExampleNewStore() {
	a := rag.NewStore()
	_ = a.Add(rag.Example{ID: "GHSA-2", Ecosystem: "npm", Package: "lodash", Advisory: "prototype pollution"})
	_ = a.Add(rag.Example{ID: "GHSA-1", Ecosystem: "Go", Package: "golang.org/x/net", Advisory: "HTTP/2 rapid reset"})

	b := rag.NewStore() // same examples, other order
	_ = b.Add(rag.Example{ID: "GHSA-1", Ecosystem: "Go", Package: "golang.org/x/net", Advisory: "HTTP/2 rapid reset"})
	_ = b.Add(rag.Example{ID: "GHSA-2", Ecosystem: "npm", Package: "lodash", Advisory: "prototype pollution"})

	fmt.Println(a.Len(), a.Digest() == b.Digest())
	for _, ex := range a.Examples() {
		fmt.Println(ex.ID, ex.Package)
	}
	// Output:
	// 2 true
	// GHSA-1 golang.org/x/net
	// GHSA-2 lodash
}

func ExampleStore_Add() {
	s := rag.NewStore()
	ex := rag.Example{ID: "GHSA-1", Ecosystem: "npm", Package: "lodash", Advisory: "prototype pollution", Fix: "-a\n+b\n"}
	fmt.Println(s.Add(ex))
	fmt.Println(s.Add(ex)) // identical: a no-op

	ex.Fix = "-a\n+c\n"
	err := s.Add(ex)
	fmt.Println(errors.Is(err, rag.ErrConflict))
	fmt.Println(err)
	// Output:
	// <nil>
	// <nil>
	// true
	// rag: example "GHSA-1": conflicting example: already in the store with a different Fix; give the new example its own ID or rebuild the store without the old one
}

func ExampleStore_Digest() {
	s := rag.NewStore()
	empty := s.Digest()
	_ = s.Add(rag.Example{ID: "GHSA-1", Advisory: "prototype pollution"})
	fmt.Println(s.Digest() != empty, len(s.Digest().String()))
	// Output: true 64
}

func ExampleNewHashEmbedder() {
	h, err := rag.NewHashEmbedder(rag.HashEmbedderConfig{}) // defaults
	if err != nil {
		panic(err)
	}
	v, _ := h.Embed(context.Background(), []string{"Prototype pollution in lodash"})
	var sq float64
	for _, x := range v[0] {
		sq += float64(x * x)
	}
	fmt.Println(h.Dimensions(), len(v[0]), math.Round(math.Sqrt(sq)*1e9)/1e9)

	_, err = rag.NewHashEmbedder(rag.HashEmbedderConfig{NGram: 99})
	fmt.Println(err)
	// Output:
	// 256 256 1
	// rag: hash embedder: NGram = 99: bad configuration: use 1..8, or 0 for 3
}

func ExampleOpenAIEmbedder() {
	// A loopback server in the OpenAI wire format; in the gate the client
	// is a cassette-backed one instead.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		type datum struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var resp struct {
			Data []datum `json:"data"`
		}
		for i, in := range req.Input {
			resp.Data = append(resp.Data, datum{i, []float64{float64(len(in)), 1}})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()

	o := &rag.OpenAIEmbedder{Client: srv.Client(), BaseURL: srv.URL, Model: "text-embedding-3-small", Dims: 2}
	v, err := o.Embed(context.Background(), []string{"abc", "de"})
	fmt.Println(v, err)

	// The digest pins model and dimensions, not the host.
	live := &rag.OpenAIEmbedder{BaseURL: "https://api.openai.com", Model: "text-embedding-3-small", Dims: 2}
	fmt.Println(o.Digest() == live.Digest())
	// Output:
	// [[3 1] [2 1]] <nil>
	// true
}

func ExampleRetriever() {
	store := rag.NewStore()
	for _, ex := range []rag.Example{
		{ID: "ex-1", Ecosystem: "npm", Package: "lodash", Advisory: "Prototype pollution in lodash zipObjectDeep"},
		{ID: "ex-2", Ecosystem: "PyPI", Package: "requests", Advisory: "Proxy-Authorization header leaked on redirect"},
		{ID: "ex-3", Ecosystem: "npm", Package: "minimist", Advisory: "Prototype pollution via __proto__ in minimist"},
		{ID: "ex-4", Ecosystem: "Go", Package: "golang.org/x/net", Advisory: "HTTP/2 rapid reset denial of service"},
	} {
		if err := store.Add(ex); err != nil {
			panic(err)
		}
	}
	h, _ := rag.NewHashEmbedder(rag.HashEmbedderConfig{})
	r := &rag.Retriever{Store: store, Embedder: h, K: 2}

	query := rag.QueryText("npm", "lodash", "Prototype pollution in lodash before 4.17.21")
	top, err := r.Retrieve(context.Background(), query)
	if err != nil {
		panic(err)
	}
	for _, s := range top {
		fmt.Printf("%s %.2f\n", s.Example.ID, s.Score)
	}
	// Output:
	// ex-1 0.79
	// ex-3 0.36
}

func ExampleExampleText() {
	ex := rag.Example{ID: "ex-1", Ecosystem: "npm", Package: "lodash", Advisory: "Prototype pollution", Fix: "(not embedded)"}
	fmt.Printf("%q\n", rag.ExampleText(ex))
	fmt.Println(rag.ExampleText(ex) == rag.QueryText("npm", "lodash", "Prototype pollution"))
	// Output:
	// "npm\nlodash\nPrototype pollution\n"
	// true
}

func ExampleCosine() {
	s, _ := rag.Cosine([]float64{1, 0}, []float64{1, 1})
	fmt.Printf("%.4f\n", s)
	_, err := rag.Cosine([]float64{1}, []float64{1, 2})
	fmt.Println(errors.Is(err, rag.ErrDimensionMismatch))
	// Output:
	// 0.7071
	// true
}

func ExampleClassify() {
	t := rag.Thresholds{Low: 0.3, High: 0.7}
	for _, score := range []float64{0.1, 0.3, 0.69, 0.7, 0.95} {
		b, _ := rag.Classify(score, t)
		fmt.Println(score, b)
	}
	_, err := rag.Classify(math.NaN(), t)
	fmt.Println(errors.Is(err, rag.ErrBadScore))
	// Output:
	// 0.1 reject
	// 0.3 borderline
	// 0.69 borderline
	// 0.7 accept
	// 0.95 accept
	// true
}

func ExampleThresholds_Validate() {
	fmt.Println(rag.Thresholds{Low: 0.3, High: 0.7}.Validate())
	err := rag.Thresholds{Low: 0.8, High: 0.2}.Validate()
	fmt.Println(errors.Is(err, rag.ErrBadThresholds))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// rag: thresholds low=0.8 high=0.2: bad band thresholds: need 0 <= low <= high <= 1, neither NaN
}

func ExampleParseBand() {
	b, err := rag.ParseBand("borderline")
	fmt.Println(b == rag.Borderline, err)
	// Output: true <nil>
}
