package cassettes

import (
	"net"
	"net/url"
	"strings"
)

// A cloud SDK that finds no credentials in its environment asks a
// credential or metadata service of the machine it runs on. Replay
// cannot answer such a request, and recording it again cannot fix it:
// the recording machine had credentials, or a metadata service, that
// the replaying one has not. A miss on one says what the SDK needs in
// replay instead (see Misses in the package documentation).

// Providers' fixes for replay: the SDK's documented environment
// variables, set by the test to dummy values. A recorded request's
// credentials are never matched.
const (
	awsFix = `give the AWS SDK dummy credentials and a region in the test, before it loads its configuration: t.Setenv("AWS_ACCESS_KEY_ID", "test"), t.Setenv("AWS_SECRET_ACCESS_KEY", "test"), t.Setenv("AWS_REGION", "us-east-1")`
	gcpFix = `give the Google client an API key in the test: t.Setenv("GOOGLE_API_KEY", "test") (genai reads it), or pass the key in its options`
	azFix  = `give the Azure client an API key instead of a token credential in the test: azure.WithAPIKey("test") (openai-go), or azcore.NewKeyCredential("test") (the Azure SDK)`
)

// credentialEndpoint says which credential or metadata service a
// request to u asks, and what the SDK needs in replay instead; "" for
// any other request.
func credentialEndpoint(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	path := u.EscapedPath()
	ip := net.ParseIP(host)
	switch {
	case host == "169.254.169.254" || host == "fd00:ec2::254":
		switch {
		case strings.HasPrefix(path, "/computeMetadata/"):
			return "a request to the Google Compute Engine metadata server (" + host + "), which Google's default credentials ask when no API key is set; " + gcpFix
		case strings.HasPrefix(path, "/metadata/"):
			return "a request to the Azure instance metadata service (" + host + "), which a managed identity asks for a token; " + azFix
		}
		return "a request to the EC2 instance metadata service (IMDS, " + host + "), which the AWS SDK's default credential chain asks when it finds no credentials; " + awsFix
	case host == "169.254.170.2" || host == "169.254.170.23" || host == "fd00:ec2::23":
		return "a request to the ECS/EKS container credential endpoint (" + host + "), which the AWS SDK asks when AWS_CONTAINER_CREDENTIALS_* is set; " + awsFix
	case host == "metadata.google.internal" || host == "metadata":
		return "a request to the Google Compute Engine metadata server (" + host + "), which Google's default credentials ask when no API key is set; " + gcpFix
	case host == "oauth2.googleapis.com" || host == "sts.googleapis.com":
		return "a request to Google's token endpoint (" + host + "), which Google's default credentials ask to exchange a service account or workload identity for a token; " + gcpFix
	case host == "login.microsoftonline.com":
		return "a request to Microsoft Entra ID (" + host + ") for a token; " + azFix
	case ip == nil && awsService(host, "sts"):
		return "a request to AWS STS (" + host + "), which the AWS SDK asks to assume a role or a web identity; " + awsFix
	case ip == nil && (awsService(host, "portal.sso") || awsService(host, "oidc")):
		return "a request to the AWS IAM Identity Center (SSO) portal (" + host + "), which the AWS SDK asks for an SSO profile's credentials; " + awsFix
	}
	return ""
}

// awsService reports whether host is an endpoint of the AWS service
// named by its first labels (sts, portal.sso, oidc): global, regional or
// FIPS, in any partition.
func awsService(host, service string) bool {
	rest, ok := strings.CutPrefix(host, service)
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "-fips")
	if !strings.HasPrefix(rest, ".") {
		return false
	}
	for _, suffix := range []string{".amazonaws.com", ".amazonaws.com.cn", ".api.aws"} {
		if strings.HasSuffix(rest, suffix) {
			return true
		}
	}
	return false
}
