package sdkgate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/harness"
)

// TestBedrockWithoutCredentials: on a machine without AWS credentials
// the SDK's default chain asks the EC2 instance metadata service through
// the run's client, which replay cannot answer. The gate says so, with
// the credentials and region to set in the test, never that the
// cassette should be recorded again.
func TestBedrockWithoutCredentials(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	for k, v := range map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CA_BUNDLE": "", "AWS_EC2_METADATA_DISABLED": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ROLE_ARN": "",
		"AWS_CONFIG_FILE": filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"), "HOME": home,
	} {
		t.Setenv(k, v)
	}
	cassette := filepath.Join(t.TempDir(), "bedrock.yaml")
	require.NoError(t, os.WriteFile(cassette, []byte("---\nversion: 2\ninteractions: []\n"), 0o644))
	cfg := harness.Config{Iterations: 20, Floor: 20, Processes: -1, ArtifactDir: t.TempDir(), ReproCommand: "go test ./summarise -run '^TestSummarise$' -count=1",
		Cassette: cassettes.Config{AllowUnused: true}}
	rep, err := cfg.Iterate(t.Context(), "bedrock-no-credentials", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		hc, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		awsCfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
		if err != nil {
			return nil, err
		}
		_, err = bedrockruntime.NewFromConfig(awsCfg).Converse(ctx, &bedrockruntime.ConverseInput{
			ModelId: aws.String(bedrockModel), Messages: bedrockText("Summarise: lodash 4.17.20.")})
		return nil, err
	})
	require.ErrorIs(t, err, harness.ErrBroken, "%s", rep)
	require.Equal(t, "credentials", rep.Classes[0].ErrorKind, "%s", rep)
	require.Empty(t, rep.ReRecordCommand)
	text := rep.String()
	require.Contains(t, text, "EC2 instance metadata service (IMDS, 169.254.169.254)")
	require.Contains(t, text, `t.Setenv("AWS_ACCESS_KEY_ID", "test")`)
	require.Contains(t, text, `t.Setenv("AWS_REGION", "us-east-1")`)
	require.NotContains(t, text, "-cassettes.record")
	require.NotContains(t, strings.ToLower(text), "re-record")
}
