package harness

import (
	"fmt"
	"strings"
)

// ConfigVar names environment variables that configure a client rather
// than feed the pipeline, with the reason they may: the harness holds
// them as configuration (child processes keep the test process's values)
// instead of setting them to other values. Name is a variable's name, or
// a prefix followed by "*".
type ConfigVar struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// DefaultConfigVars is the list of a Config whose ConfigVars is nil: the
// variables the official LLM SDKs (Anthropic, OpenAI, Gemini, AWS for
// Bedrock, Ollama) and Go's HTTP client read to configure a client (base
// URL, credentials, organisation, project, profile, region, proxy,
// configuration directory). A pipeline built on an SDK with its default
// options reads them; perturbing them would send the requests elsewhere,
// not test the pipeline. HOME and the configuration directories are not
// held: a child's fresh home holds copies of the configuration files the
// SDKs look for there.
func DefaultConfigVars() []ConfigVar {
	sdk := func(reason string, names ...string) []ConfigVar {
		out := make([]ConfigVar, len(names))
		for i, n := range names {
			out[i] = ConfigVar{Name: n, Reason: reason}
		}
		return out
	}
	var out []ConfigVar
	out = append(out, sdk("Anthropic SDK client configuration (base URL, credentials, profile, organisation, workspace, headers, telemetry, cloud routes)",
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
		"ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_WORKSPACE_ID", "ANTHROPIC_FEDERATION_RULE_ID",
		"ANTHROPIC_IDENTITY_TOKEN", "ANTHROPIC_IDENTITY_TOKEN_FILE", "ANTHROPIC_SCOPE", "ANTHROPIC_SERVICE_ACCOUNT_ID",
		"ANTHROPIC_WEBHOOK_SIGNING_KEY", "ANTHROPIC_OPEN_TELEMETRY*", "ANTHROPIC_AWS_*", "ANTHROPIC_BEDROCK_*",
		"ANTHROPIC_FOUNDRY_*", "ANTHROPIC_GOOGLE_CLOUD_*", "ANTHROPIC_VERTEX_*", "CLOUD_ML_REGION")...)
	out = append(out, sdk("OpenAI SDK client configuration (base URL, credentials, organisation, project, headers)",
		"OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
		"OPENAI_WEBHOOK_SECRET", "OPENAI_CUSTOM_HEADERS")...)
	out = append(out, sdk("Gemini (Google Gen AI) SDK client configuration (credentials, base URL, project, location, backend)",
		"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_*", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL",
		"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_CLOUD_REGION", "GOOGLE_APPLICATION_CREDENTIALS")...)
	out = append(out, sdk("AWS SDK configuration for Bedrock (region, profile, credentials, endpoints, config files, the Lambda trace id it forwards)",
		"AWS_*", "_X_AMZN_TRACE_ID")...)
	out = append(out, sdk("Ollama client configuration (server address; whether it signs requests with the key in ~/.ollama)", "OLLAMA_HOST", "OLLAMA_AUTH")...)
	out = append(out, sdk("proxy of Go's HTTP client (http.ProxyFromEnvironment)",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")...)
	return out
}

// resolveConfigVars applies the default and checks every entry.
func (r *resolved) resolveConfigVars() error {
	if r.ConfigVars == nil {
		r.ConfigVars = DefaultConfigVars()
	}
	seen := map[string]bool{}
	for i, v := range r.ConfigVars {
		name := strings.TrimSuffix(v.Name, "*")
		switch {
		case name == "" || strings.ContainsAny(name, "=*\x00"):
			return fmt.Errorf("%w: ConfigVars[%d] is %q; want a variable name, or a prefix followed by *", errInvalidConfig, i, v.Name)
		case strings.TrimSpace(v.Reason) == "":
			return fmt.Errorf("%w: ConfigVars[%d] (%s) has no Reason; every variable held as configuration must say why it is not an input", errInvalidConfig, i, v.Name)
		case seen[v.Name]:
			return fmt.Errorf("%w: ConfigVars[%d] repeats %s", errInvalidConfig, i, v.Name)
		}
		seen[v.Name] = true
	}
	return nil
}

// configVar reports whether the variable k is held as configuration.
func (r *resolved) configVar(k string) bool {
	for _, v := range r.ConfigVars {
		if p, ok := strings.CutSuffix(v.Name, "*"); ok && strings.HasPrefix(k, p) || v.Name == k {
			return true
		}
	}
	return false
}
