package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/codegenie/codegenie/llm"
)

func ExampleNewAnthropic() {
	// In tests the client's transport is a cassette or, as here, the
	// in-process fake; in production it is a plain *http.Client and the key
	// comes from the caller's secret store, never from the environment.
	client := &http.Client{Transport: fakellm.New(fakellm.Config{}).Transport()}
	a, err := llm.NewAnthropic(llm.AnthropicConfig{
		APIKey:     "sk-ant-placeholder",
		Model:      "claude-sonnet-4-5",
		MaxTokens:  1024,
		Stream:     true,
		HTTPClient: client,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Complete(context.Background(), llm.Request{System: "You fix advisories.", Prompt: "Say hi."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	fmt.Println(res.Model, res.StopReason, res.InputTokens, res.OutputTokens)
	fmt.Printf("%+v\n", a.Settings())
	// Output:
	// fakellm echo: Say hi.
	// claude-sonnet-4-5 end_turn 7 6
	// {Provider:anthropic Model:claude-sonnet-4-5 Temperature:0 MaxTokens:1024 Stream:true APIVersion:2026-10-21}
}

func ExampleNewOpenAI() {
	srv := fakellm.New(fakellm.Config{})
	o, err := llm.NewOpenAI(llm.OpenAIConfig{
		BaseURL:    "http://127.0.0.1:8080", // a local model server
		Model:      "qwen2.5-coder-7b",
		HTTPClient: &http.Client{Transport: srv.Transport()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := o.Complete(context.Background(), llm.Request{Prompt: "Say hi."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text, "/", res.StopReason)
	// Output:
	// fakellm echo: Say hi. / stop
}

func ExampleAPIError() {
	srv := fakellm.New(fakellm.Config{Mode: fakellm.HTTPError, Status: 529})
	a, _ := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "m", HTTPClient: &http.Client{Transport: srv.Transport()}})
	_, err := a.Complete(context.Background(), llm.Request{Prompt: "x"})
	if apiErr, ok := errors.AsType[*llm.APIError](err); ok {
		fmt.Println(apiErr.Provider, apiErr.Status)
	}
	// Output:
	// anthropic 529
}
