package sdkgate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/childproc"
)

// bedrockSharedFiles are a user's ~/.aws/config and ~/.aws/credentials
// with dummy credentials shaped like real ones.
var bedrockSharedFiles = map[string]string{
	"config":      "[default]\nregion = us-east-1\n",
	"credentials": "[default]\naws_access_key_id = AKIAQX3CODEGENIE0009\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYcodegenie09\n",
}

// bedrockSharedFilesPipeline asks Bedrock one Converse through the AWS
// SDK's configuration, whose region and credentials come from the shared
// files under the home, and says where they came from. In a child
// process it then writes those files, as an SDK refreshing a token does:
// it appends to the credentials and rewrites the config. The files are
// named from os.UserHomeDir as the SDK names its defaults, which it does
// once, when its package is initialised: before this test points HOME
// at its own directory.
func bedrockSharedFilesPipeline(ctx context.Context, run *harness.Run, cassette string, _ bool) ([]byte, error) {
	hc, err := run.Client(cassette)
	if err != nil {
		return nil, err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc),
		config.WithSharedConfigFiles([]string{filepath.Join(home, ".aws", "config")}),
		config.WithSharedCredentialsFiles([]string{filepath.Join(home, ".aws", "credentials")}))
	if err != nil {
		return nil, err
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, err
	}
	out, err := bedrockruntime.NewFromConfig(cfg).Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(bedrockModel),
		Messages: bedrockText("Summarise: lodash 4.17.20.")})
	if err != nil {
		return nil, err
	}
	text := out.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberText).Value
	if spec, _ := childproc.Self(); spec != nil {
		f, err := os.OpenFile(filepath.Join(home, ".aws", "credentials"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString("[written-by-a-child]\naws_access_key_id = child\n")
		if err = errors.Join(err, f.Close()); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(home, ".aws", "config"), []byte("[default]\nregion = eu-west-3\n"), 0o600); err != nil {
			return nil, err
		}
	}
	return json.Marshal(map[string]string{"region": cfg.Region, "shared credentials": strings.SplitN(creds.Source, ":", 2)[0], "text": text})
}

// TestBedrockGateSharedFiles gates a pipeline on aws-sdk-go-v2 whose
// region and credentials come from ~/.aws/config and ~/.aws/credentials
// alone (no AWS variable set): every child process reads them in its
// fresh home and the gate passes, while the writes each child makes to
// those files leave the test process's own byte-identical.
func TestBedrockGateSharedFiles(t *testing.T) {
	env := map[string]string{}
	var home string
	if _, inner := os.LookupEnv(cloudDirVar); !inner {
		home = t.TempDir()
		for name, content := range bedrockSharedFiles {
			p := filepath.Join(home, ".aws", name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		}
		env["HOME"] = home
		// Empty is unset for the SDK: the files are all it reads.
		for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
			"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE"} {
			env[k] = ""
		}
	}
	g := cloudGate{scenario: "bedrock-shared-files", api: bedrockAPI, env: env, pipeline: bedrockSharedFilesPipeline}
	rep, cassette, role := g.check(t)
	if role != cloudTop {
		return
	}
	cloudRequirePassed(t, rep, cassette, "AKIAQX3CODEGENIE0009", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYcodegenie09")
	for name, content := range bedrockSharedFiles {
		b, err := os.ReadFile(filepath.Join(home, ".aws", name))
		require.NoError(t, err)
		require.Equal(t, content, string(b), "a child's write reached the test process's ~/.aws/%s", name)
	}
	require.Contains(t, rep.Processes.NotVaried, "SDK configuration: a fresh home holds copies of "+filepath.Join(home, ".aws")+" (a child's writes stay in its copies)")
}
