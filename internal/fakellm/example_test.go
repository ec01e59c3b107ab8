package fakellm_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/codegenie/codegenie/llm"
	"github.com/codegenie/codegenie/prompt"
)

func ExampleNew() {
	srv := fakellm.New(fakellm.Config{}) // zero Config: Normal answers
	p, err := prompt.Builder{}.Build(prompt.Input{
		Advisory: prompt.Advisory{ID: "GHSA-35jh-r3h4-6jhm", Summary: "Command injection in lodash",
			Ecosystem: "npm", Package: "lodash", FixedVersion: "4.17.21"},
		Files: []prompt.File{{Path: "package.json", Content: []byte(`{
  "dependencies": {
    "lodash": "^4.17.20"
  }
}
`)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "claude-x", Stream: true,
		HTTPClient: &http.Client{Transport: srv.Transport()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Complete(context.Background(), llm.Request{System: p.System, Prompt: p.User})
	if err != nil {
		fmt.Println(err)
		return
	}
	diff, err := prompt.ParseAnswer(res.Text)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(diff))
	// Output:
	// diff --git a/package.json b/package.json
	// --- a/package.json
	// +++ b/package.json
	// @@ -1,5 +1,5 @@
	//  {
	//    "dependencies": {
	// -    "lodash": "^4.17.20"
	// +    "lodash": "^4.17.21"
	//    }
	//  }
}

func ExampleServer_Transport() {
	// The in-process transport routes any host to the server: no sockets,
	// so it also works inside testing/synctest bubbles.
	client := &http.Client{Transport: fakellm.New(fakellm.Config{Mode: fakellm.HTTPError, Status: 529}).Transport()}
	res, err := client.Post("http://anthropic.invalid/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	fmt.Println(res.StatusCode)
	// Output:
	// 529
}

func ExampleEmbed() {
	a := fakellm.Embed("lodash prototype pollution", 8)
	b := fakellm.Embed("Prototype pollution in lodash", 8)
	var dot float64
	for i := range a {
		dot += float64(a[i] * b[i])
	}
	fmt.Printf("%.3f\n", dot)
	// Output:
	// 0.866
}

func ExampleMode_String() {
	fmt.Println(fakellm.FailFirst)
	// Output:
	// failfirst
}
