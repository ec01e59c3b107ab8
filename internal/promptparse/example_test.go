package promptparse_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/codegenie/codegenie/internal/promptparse"
	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

func ExampleParse() {
	in := prompttest.Small()
	in.Files[0].Content = []byte("a file that contains a fence:\n```\n````text bytes=3\n")
	p, _ := prompt.Builder{}.Build(in)
	back, err := promptparse.Parse(p.User)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", back.Files[0].Content)

	// One byte off what Build writes is refused, naming the line.
	_, err = promptparse.Parse(strings.Replace(p.User, "- package: \"lodash\"", "- package: lodash", 1))
	fmt.Println(errors.Is(err, promptparse.ErrMalformed))
	fmt.Println(err)
	// Output:
	// "a file that contains a fence:\n```\n````text bytes=3\n"
	// true
	// promptparse: line 7: malformed prompt: want a quoted string, got "lodash"
}
