package llm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/codegenie/codegenie/llm"
)

// BenchmarkAnthropicComplete measures one Complete through the SDK against
// the in-process fake: request encoding, the SDK's middleware, the fake's
// answer and response decoding (JSON, or SSE with accumulation).
func BenchmarkAnthropicComplete(b *testing.B) {
	prompt := strings.Repeat("the vulnerable package is pinned in the manifest; ", 80) // ~4 KiB
	for _, stream := range []bool{false, true} {
		name := "json"
		if stream {
			name = "sse"
		}
		b.Run(name, func(b *testing.B) {
			c := &http.Client{Transport: fakellm.New(fakellm.Config{ChunkSize: 64}).Transport()}
			a := newAnthropic(b, "", c, stream)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Complete(ctx, llm.Request{System: "sys", Prompt: prompt}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpenAIComplete(b *testing.B) {
	prompt := strings.Repeat("the vulnerable package is pinned in the manifest; ", 80)
	c := &http.Client{Transport: fakellm.New(fakellm.Config{}).Transport()}
	o, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", HTTPClient: c})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.Complete(ctx, llm.Request{System: "sys", Prompt: prompt}); err != nil {
			b.Fatal(err)
		}
	}
}
