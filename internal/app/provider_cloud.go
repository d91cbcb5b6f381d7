package app

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/bedrock"
	"github.com/synapse-agent/synapse/internal/llm/vertex"
)

// Claude through a company's cloud account: the bedrock (Amazon Bedrock)
// and vertex (Google Vertex AI) providers. They are chosen like the others
// (--provider, SYNAPSE_PROVIDER, "provider" in settings.json) or, as Claude
// Code users already have it, by CLAUDE_CODE_USE_BEDROCK=1 or
// CLAUDE_CODE_USE_VERTEX=1; they read Claude Code's variables too.

// cloudConfig is what the bedrock and vertex providers read from the
// environment and "env" of settings.json; comparable, like providerChoice.
type cloudConfig struct {
	Region string // AWS_REGION / AWS_DEFAULT_REGION, or CLOUD_ML_REGION

	// bedrock
	Profile, AccessKeyID, SecretAccessKey, SessionToken, BearerToken string
	NoIMDS                                                           bool

	// vertex
	Project, CredentialsFile, ADCFile string
}

// cloudSecretVars hold the cloud providers' secrets, redacted from the
// debug log like the provider credentials.
func cloudSecretVars() []string {
	return []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"}
}

func isCloud(name string) bool {
	return name == config.ProviderBedrock || name == config.ProviderVertex
}

// cloudSwitch is the cloud provider Claude Code's switches choose:
// CLAUDE_CODE_USE_BEDROCK or CLAUDE_CODE_USE_VERTEX set to a true value.
func cloudSwitch(lookup func(string) (string, string)) string {
	on := func(name string) bool {
		v, _ := lookup(name)
		switch strings.ToLower(v) {
		case "1", "true", "yes", "on":
			return true
		}
		return false
	}
	switch {
	case on("CLAUDE_CODE_USE_BEDROCK"):
		return config.ProviderBedrock
	case on("CLAUDE_CODE_USE_VERTEX"):
		return config.ProviderVertex
	}
	return ""
}

// cloudModelProvider is the cloud provider a model id names: Bedrock's
// ("us.anthropic.claude-…-v1:0", "anthropic.claude-…", a Bedrock ARN) or
// Vertex's ("claude-…@20250929"); "" for any other name.
func cloudModelProvider(model string) string {
	switch {
	case strings.Contains(model, "anthropic.claude"), strings.HasPrefix(model, "arn:aws:bedrock:"):
		return config.ProviderBedrock
	case strings.HasPrefix(model, "claude") && strings.Contains(model, "@"):
		return config.ProviderVertex
	}
	return ""
}

// staysOnCloud reports whether a model whose name implies provider implied
// is served by the start-up provider start instead: any Claude model is, on
// Bedrock or Vertex (the provider maps the name to its id).
func staysOnCloud(start, implied string) bool {
	return isCloud(start) && implied == config.ProviderAnthropic
}

// resolveCloud completes c (a bedrock or vertex choice) from the
// environment and settings.json: regions, project, credentials' sources,
// the endpoint override. It reads no file and asks no server; New does
// (the AWS config files, the Google key file) when the provider is built.
func resolveCloud(c providerChoice, lookup func(string) (string, string), where func(string) string) (providerChoice, error) {
	get := func(names ...string) string {
		for _, n := range names {
			if v, _ := lookup(n); v != "" {
				return v
			}
		}
		return ""
	}
	urlVar := bedrock.URLVar
	if c.Name == config.ProviderVertex {
		urlVar = vertex.URLVar
	}
	if base, from := lookup(urlVar); base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return providerChoice{}, fmt.Errorf("%s (%s) is not a usable URL: %q; use a full http(s) URL such as %s",
				urlVar, where(from), base, exampleCloudURL(c.Name))
		}
		c.BaseURL = base
	}
	if c.Name == config.ProviderBedrock {
		disabled := strings.ToLower(get("AWS_EC2_METADATA_DISABLED"))
		c.Cloud = cloudConfig{
			Region:          get("AWS_REGION", "AWS_DEFAULT_REGION"),
			Profile:         get("AWS_PROFILE"),
			AccessKeyID:     get("AWS_ACCESS_KEY_ID"),
			SecretAccessKey: get("AWS_SECRET_ACCESS_KEY"),
			SessionToken:    get("AWS_SESSION_TOKEN"),
			BearerToken:     get("AWS_BEARER_TOKEN_BEDROCK"),
			NoIMDS:          disabled == "true" || disabled == "1",
		}
		return c, nil
	}
	c.Cloud = cloudConfig{
		Region:          get("CLOUD_ML_REGION"),
		Project:         get("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"),
		CredentialsFile: get("GOOGLE_APPLICATION_CREDENTIALS"),
		ADCFile:         vertex.ADCPath(get("HOME"), get("CLOUDSDK_CONFIG")),
	}
	return c, nil
}

func exampleCloudURL(provider string) string {
	if provider == config.ProviderVertex {
		return "https://us-east5-aiplatform.googleapis.com"
	}
	return "https://bedrock-runtime.us-east-1.amazonaws.com"
}

// buildCloud builds the bedrock or vertex provider. It reads the AWS
// configuration files or the Google key file, and asks no server:
// credentials are fetched with the first request.
func (c providerChoice) buildCloud(retry *llm.RetryPolicy) (llm.Provider, error) {
	ctx := context.Background() // loading files; the tokens' own requests take each request's context
	cc := c.Cloud
	if c.Name == config.ProviderBedrock {
		return bedrock.New(ctx, bedrock.Options{
			Region: cc.Region, Profile: cc.Profile,
			AccessKeyID: cc.AccessKeyID, SecretAccessKey: cc.SecretAccessKey, SessionToken: cc.SessionToken,
			BearerToken: cc.BearerToken, NoIMDS: cc.NoIMDS,
			BaseURL: c.BaseURL, IdleTimeout: c.IdleTimeout, Retry: retry,
		})
	}
	return vertex.New(ctx, vertex.Options{
		Region: cc.Region, Project: cc.Project, CredentialsFile: cc.CredentialsFile, ADCFile: cc.ADCFile,
		BaseURL: c.BaseURL, IdleTimeout: c.IdleTimeout, Retry: retry,
	})
}
