package cassettes

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// missOf sends r through c and returns the miss it must give.
func missOf(t *testing.T, c *Cassette, base string, r plainReq) *MissError {
	t.Helper()
	_, err := send(c.Client(), base, r)
	require.ErrorIs(t, err, ErrInteractionNotFound)
	var me *MissError
	require.ErrorAs(t, err, &me)
	return me
}

// TestMissIsTyped: a miss is data: the request, the cassette and the
// line of the nearest interaction, and each differing field with both
// values, inside the *CassetteError that locates it; it is not worth
// retrying.
func TestMissIsTyped(t *testing.T) {
	srv := echoServer(t)
	other := plainReq{method: "POST", path: "/v1/other", body: `{"q":1}`}
	recorded := plainReq{method: "POST", path: "/v1/messages", body: `{"model":"claude-x","max_tokens":100}`}
	path := recordPlain(t, t.TempDir(), "typed", srv, []plainReq{other, recorded})
	c, err := Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	changed := recorded
	changed.body = `{"model":"claude-y","max_tokens":100}`
	_, err = send(c.Client(), srv.URL, changed)
	var ce *CassetteError
	require.ErrorAs(t, err, &ce)
	var me *MissError
	require.ErrorAs(t, err, &me)
	require.ErrorIs(t, err, ErrInteractionNotFound)
	require.False(t, me.RetryableError())
	require.Equal(t, "POST", me.Method)
	require.Equal(t, srv.URL+"/v1/messages", me.URL)
	require.Equal(t, path, me.Cassette)
	require.Equal(t, 1, me.Nearest)
	require.Equal(t, ce.Line, me.Line)
	require.Positive(t, me.Line)
	require.Equal(t, []struct{ Field, Recorded, Requested string }{{`body ["model"]`, `"claude-x"`, `"claude-y"`}}, me.Diff)
	require.Zero(t, me.Served)
	require.False(t, me.Exhausted || me.APIVersion)
	require.Empty(t, me.Credentials)
	require.NotContains(t, me.Error(), "re-record", "no command is known for a cassette opened with Open and no Hint")
}

// TestMissChange: the misses of requests that one change to the code
// explains have one Change, whichever request missed; a value that
// differs between requests in another way gives another.
func TestMissChange(t *testing.T) {
	srv := echoServer(t)
	prompt := func(file, rule string) plainReq {
		return plainReq{method: "POST", path: "/v1/messages",
			body: `{"system":"You review Go code. ` + rule + `","messages":[{"role":"user","content":"review ` + file + `"}]}`}
	}
	files := []string{"a.go", "b.go", "c_test.go"}
	var rec []plainReq
	for _, f := range files {
		rec = append(rec, prompt(f, "Be concise."))
	}
	path := recordPlain(t, t.TempDir(), "fanout", srv, rec)
	c, err := Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	var changes []string
	for i, f := range files {
		me := missOf(t, c, srv.URL, prompt(f, "Be brief."))
		require.Equal(t, i, me.Nearest, "each request is told against its own recording")
		require.Equal(t, []struct{ Field, Recorded, Requested string }{{`body ["system"]`, `"…concise."`, `"…brief."`}}, me.Diff)
		changes = append(changes, me.Change())
	}
	require.Equal(t, changes[0], changes[1])
	require.Equal(t, changes[0], changes[2])
	require.NotEqual(t, changes[0], missOf(t, c, srv.URL, prompt("a.go", "Be short.")).Change(), "another edit")
	at := func(ts string) plainReq {
		r := prompt("a.go", "Be concise.")
		r.body = strings.Replace(r.body, `"messages"`, `"metadata":{"at":"`+ts+`"},"messages"`, 1)
		return r
	}
	require.NotEqual(t, missOf(t, c, srv.URL, at("10:00:01")).Change(), missOf(t, c, srv.URL, at("10:00:02")).Change(),
		"a value that differs between runs")
	require.NotEmpty(t, changes[0])
	require.NotContains(t, changes[0], "concise", "the change is a digest")
}

// TestMissOnCredentialEndpoint: a request to a cloud credential or
// metadata service is a miss that says what the SDK needs in replay, and
// never suggests recording again, even with a Hint.
func TestMissOnCredentialEndpoint(t *testing.T) {
	srv := echoServer(t)
	path := recordPlain(t, t.TempDir(), "creds", srv, []plainReq{{method: "POST", path: "/v1/messages", body: `{}`}})
	tests := []struct {
		name, method, url, fix string
	}{
		{"EC2 IMDS token", "PUT", "http://169.254.169.254/latest/api/token", "AWS_ACCESS_KEY_ID"},
		{"EC2 IMDS role", "GET", "http://169.254.169.254/latest/meta-data/iam/security-credentials/", "AWS_REGION"},
		{"EC2 IMDS over IPv6", "PUT", "http://[fd00:ec2::254]/latest/api/token", "AWS_SECRET_ACCESS_KEY"},
		{"ECS container credentials", "GET", "http://169.254.170.2/v2/credentials/abc", "AWS_ACCESS_KEY_ID"},
		{"EKS pod identity", "GET", "http://169.254.170.23/v1/credentials", "AWS_ACCESS_KEY_ID"},
		{"STS regional", "POST", "https://sts.us-west-2.amazonaws.com/", "AWS_ACCESS_KEY_ID"},
		{"STS global", "POST", "https://sts.amazonaws.com/", "AWS_ACCESS_KEY_ID"},
		{"SSO portal", "GET", "https://portal.sso.eu-west-1.amazonaws.com/federation/credentials", "AWS_ACCESS_KEY_ID"},
		{"SSO OIDC", "POST", "https://oidc.eu-west-1.amazonaws.com/token", "AWS_ACCESS_KEY_ID"},
		{"GCE metadata by name", "GET", "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token", "GOOGLE_API_KEY"},
		{"GCE metadata by address", "GET", "http://169.254.169.254/computeMetadata/v1/project/project-id", "GOOGLE_API_KEY"},
		{"Google token exchange", "POST", "https://oauth2.googleapis.com/token", "GOOGLE_API_KEY"},
		{"Azure IMDS", "GET", "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01", "azure.WithAPIKey"},
		{"Entra ID", "POST", "https://login.microsoftonline.com/tenant/oauth2/v2.0/token", "azure.WithAPIKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, Config{AllowUnused: true, Hint: "rerecord-cmd"})
			require.NoError(t, err)
			req, err := http.NewRequest(tt.method, tt.url, nil)
			require.NoError(t, err)
			_, err = c.Client().Do(req)
			var me *MissError
			require.ErrorAs(t, err, &me)
			require.Contains(t, me.Credentials, tt.fix)
			require.Equal(t, -1, me.Nearest, "no recorded LLM call is near a credential lookup")
			require.Empty(t, me.Diff)
			msg := err.Error()
			require.Contains(t, msg, me.Credentials)
			require.Contains(t, msg, "recording again cannot fix it")
			require.NotContains(t, msg, "rerecord-cmd")
		})
	}
	for _, u := range []string{"https://api.anthropic.com/v1/messages", "https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse", "https://stsx.amazonaws.com/", "http://169.254.169.253/"} {
		c, err := Open(path, Config{AllowUnused: true})
		require.NoError(t, err)
		_, err = c.Client().Post(u, "application/json", strings.NewReader(`{"x":1}`))
		var me *MissError
		require.ErrorAs(t, err, &me)
		require.Empty(t, me.Credentials, u)
	}
}

// TestMissAPIVersion: requests that differ from their recording only in
// the API version their SDK sends (the Anthropic-Version header, the
// beta query parameter of an older SDK's path) say so once, with the
// change and the command that records the cassette again; Close then
// refers to it rather than listing interactions as a request change.
func TestMissAPIVersion(t *testing.T) {
	srv := echoServer(t)
	v1 := http.Header{"Anthropic-Version": {"2023-06-01"}, "Content-Type": {"application/json"}}
	v2 := http.Header{"Anthropic-Version": {"2026-10-21"}, "Content-Type": {"application/json"}}
	tests := []struct {
		name             string
		recPath, reqPath string
		want             string
	}{
		{"header", "/v1/messages", "/v1/messages", `header Anthropic-Version "2023-06-01" != "2026-10-21"`},
		{"header and beta path", "/v1/messages?beta=true", "/v1/messages", `header Anthropic-Version "2023-06-01" != "2026-10-21"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := []plainReq{
				{method: "POST", path: tt.recPath, body: `{"n":1}`, header: v1},
				{method: "POST", path: tt.recPath, body: `{"n":2}`, header: v1},
			}
			path := recordPlain(t, t.TempDir(), "version", srv, rec)
			c, err := Open(path, Config{Hint: "rerecord-cmd"})
			require.NoError(t, err)
			var changes []string
			for _, r := range rec {
				r.path, r.header = tt.reqPath, v2
				me := missOf(t, c, srv.URL, r)
				require.True(t, me.APIVersion, "%v", me)
				require.Contains(t, me.VersionChange(), tt.want)
				msg := me.Error()
				require.Equal(t, 1, strings.Count(msg, "Anthropic-Version"), msg)
				require.Contains(t, msg, "only in the API version its SDK sends: ")
				require.Contains(t, msg, tt.want)
				if tt.recPath != tt.reqPath {
					require.Contains(t, msg, "url "+srv.URL+tt.recPath+" != "+srv.URL+tt.reqPath)
				}
				require.True(t, strings.HasSuffix(msg, "so the cassette needs recording again: rerecord-cmd"), msg)
				changes = append(changes, me.Change())
			}
			require.Equal(t, changes[0], changes[1], "one version change, whatever the request")
			err = c.Close()
			require.ErrorIs(t, err, ErrUnusedInteractions)
			require.Contains(t, err.Error(), "every request that missed differed from its recording only in the API version its SDK sends")
			require.NotContains(t, err.Error(), "2026-10-21", "said once, in the miss")
		})
	}

	// A body change besides the version is a request change.
	path := recordPlain(t, t.TempDir(), "version", srv, []plainReq{{method: "POST", path: "/v1/messages", body: `{"n":1}`, header: v1}})
	c, err := Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	me := missOf(t, c, srv.URL, plainReq{method: "POST", path: "/v1/messages", body: `{"n":3}`, header: v2})
	require.False(t, me.APIVersion)
}

// TestMissExhaustedIsAMiss: a cassette used up by one run is a miss that
// says so.
func TestMissExhaustedIsAMiss(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/p", body: `{}`}
	path := recordPlain(t, t.TempDir(), "once", srv, []plainReq{r})
	c, err := Open(path, Config{Hint: "rerecord-cmd"})
	require.NoError(t, err)
	readAll(t, do(t, c.Client(), srv.URL, r))
	me := missOf(t, c, srv.URL, r)
	require.True(t, me.Exhausted)
	require.Equal(t, 1, me.Served)
	require.Contains(t, me.Error(), "cassette exhausted: open it per run")
	require.NotContains(t, me.Error(), "rerecord-cmd", "recording again cannot help")
	require.False(t, errors.Is(me, ErrUnusedInteractions))
}
