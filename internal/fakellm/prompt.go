package fakellm

import "github.com/codegenie/codegenie/prompt"

// parsePrompt reads the user prompt with prompt.Parse and keeps the parts
// the server answers from.
func parsePrompt(user string) (input, error) {
	in, err := prompt.Parse(user)
	if err != nil {
		return input{}, err
	}
	out := input{
		Advisory: advisory{
			ID:           in.Advisory.ID,
			Ecosystem:    in.Advisory.Ecosystem,
			Package:      in.Advisory.Package,
			FixedVersion: in.Advisory.FixedVersion,
		},
		Attempts: len(in.Attempts),
	}
	for _, f := range in.Files {
		out.Files = append(out.Files, file{Path: f.Path, Content: f.Content})
	}
	return out, nil
}

func formatAnswer(diff []byte) string { return prompt.FormatAnswer(diff) }
