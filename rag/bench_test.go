package rag

import (
	"context"
	"fmt"
	"testing"
)

// benchQuery is a realistic advisory-sized query.
var benchQuery = QueryText("npm", "lodash",
	"Versions of lodash prior to 4.17.21 are vulnerable to prototype pollution via the zipObjectDeep "+
		"function; an attacker able to control property paths can modify Object.prototype, leading to "+
		"denial of service or remote code execution in some applications. Upgrade to 4.17.21 or later.")

func BenchmarkHashEmbed(b *testing.B) {
	h := mustHash(b, HashEmbedderConfig{})
	texts := []string{benchQuery}
	b.SetBytes(int64(len(benchQuery)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRetrieve(b *testing.B) {
	for _, n := range []int{30, 1000} {
		for _, cached := range []bool{false, true} {
			b.Run(fmt.Sprintf("examples=%d/cache=%t", n, cached), func(b *testing.B) {
				r := &Retriever{Store: mustStore(b, corpus(n)...), Embedder: mustHash(b, HashEmbedderConfig{}), K: 5, Vectors: cacheIf(cached)}
				b.ReportAllocs()
				for b.Loop() {
					got, err := r.Retrieve(context.Background(), benchQuery)
					if err != nil {
						b.Fatal(err)
					}
					if len(got) != 5 {
						b.Fatalf("got %d results", len(got))
					}
				}
			})
		}
	}
}

func BenchmarkStoreDigest(b *testing.B) {
	exs := corpus(1000)
	b.ReportAllocs()
	for b.Loop() {
		s := NewStore()
		for _, ex := range exs {
			if err := s.Add(ex); err != nil {
				b.Fatal(err)
			}
		}
		_ = s.Digest()
	}
}

func cacheIf(on bool) *VectorCache {
	if on {
		return NewVectorCache(0)
	}
	return nil
}
