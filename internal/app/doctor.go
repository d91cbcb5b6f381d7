package app

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/session"
)

// Diagnosis is what `synapse doctor` reports about the model side: the
// provider and model a start would use and why, and which credentials were
// found for every provider. It holds no secret: a credential is named by
// its variable or file and where it was found, never by its value.
type Diagnosis struct {
	Provider  string // the provider a start would use
	Why       string // what chose it, to follow "chosen by"
	Model     string
	ModelFrom string         // where the model came from: "from SYNAPSE_MODEL (environment)", "the provider's default"…
	Endpoint  string         // the base URL in use (no user info, no query), "" for the provider's default
	Price     *session.Price // per million tokens; nil when the model has no known price
	// Problem, when set, is why the provider cannot be used, worded as the fix.
	Problem     error
	Credentials []CredentialReport
}

// CredentialReport is what was found for one provider.
type CredentialReport struct {
	Provider string
	Found    []string // "ANTHROPIC_API_KEY (environment)", "~/.aws/credentials (file)", "region us-east-1 (AWS_REGION, environment)"
	Missing  string   // what to set when nothing was found
}

// Diagnose reports the provider choice for sel (empty: what a plain start
// uses). An error is a settings.json that cannot be read.
func (a *App) Diagnose(sel ProviderSelection) (Diagnosis, error) {
	s, err := a.Settings()
	if err != nil {
		return Diagnosis{}, err
	}
	path := a.Config.SettingsPath()
	lookup := func(name string) (string, string) { return s.Lookup(a.Config.Getenv, name) }
	from := func(name, where string) string {
		if where == "environment" {
			return name + " (environment)"
		}
		return name + ` ("env" in ` + path + ")"
	}

	c, perr := resolveProvider(s, a.Config.Getenv, path, sel)
	if perr == nil && isCloud(c.Name) {
		// A missing region or project only shows when the provider is made.
		_, perr = c.buildCloud(nil)
	}
	d := Diagnosis{Provider: c.Name, Model: c.Model, Problem: perr}
	if perr != nil {
		// Resolve the name and model alone, for the report.
		d.Provider, d.Model = diagnoseName(s, lookup, sel), ""
	}

	// Why this provider: the first rule of resolveProvider's order that applied.
	model, modelFrom := strings.TrimSpace(sel.Model), "--model"
	if model == "" {
		if v, w := lookup("SYNAPSE_MODEL"); v != "" {
			model, modelFrom = v, from("SYNAPSE_MODEL", w)
		}
	}
	switch v, w := lookup("SYNAPSE_PROVIDER"); {
	case strings.TrimSpace(sel.Provider) != "":
		d.Why = "--provider"
	case v != "":
		d.Why = from("SYNAPSE_PROVIDER", w)
	case s.Provider != "":
		d.Why = `"provider" in ` + path
	case modelProvider(model) != "":
		d.Why = "the model name " + model + ", from " + modelFrom
	case cloudSwitch(lookup) != "" && cloudSwitch(lookup) == d.Provider:
		sw := "CLAUDE_CODE_USE_BEDROCK"
		if d.Provider == config.ProviderVertex {
			sw = "CLAUDE_CODE_USE_VERTEX"
		}
		_, w := lookup(sw)
		d.Why = from(sw, w)
	case d.Provider != config.ProviderAnthropic:
		d.Why = "its credentials being the only ones configured (no Anthropic key)"
	default:
		d.Why = "default (nothing named another provider)"
	}
	if d.Model != "" {
		switch {
		case model != "":
			d.ModelFrom = "from " + modelFrom
		case s.Model != "" && d.Model == s.Model:
			d.ModelFrom = `from "model" in ` + path
		default:
			d.ModelFrom = "the provider's default"
		}
		if pr, ok := a.pricing(nil).Lookup(d.Model); ok {
			d.Price = &pr
		}
	}
	if c.BaseURL != "" {
		d.Endpoint = safeURL(c.BaseURL)
	}
	d.Credentials = a.credentialReports(lookup, from, d.Provider, c)
	return d, nil
}

// diagnoseName is the provider name resolveProvider would have tried when it
// failed (an unusable name is reported as given).
func diagnoseName(s config.Settings, lookup func(string) (string, string), sel ProviderSelection) string {
	if v := strings.ToLower(strings.TrimSpace(sel.Provider)); v != "" {
		return v
	}
	if v, _ := lookup("SYNAPSE_PROVIDER"); v != "" {
		return strings.ToLower(v)
	}
	if s.Provider != "" {
		return s.Provider
	}
	model := strings.TrimSpace(sel.Model)
	if model == "" {
		model, _ = lookup("SYNAPSE_MODEL")
	}
	return inferProvider(model, lookup)
}

func (a *App) credentialReports(lookup func(string) (string, string), from func(name, where string) string, chosen string, c providerChoice) []CredentialReport {
	present := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if v, w := lookup(n); v != "" {
				out = append(out, from(n, w))
			}
		}
		return out
	}
	// valued lists settings whose value is no secret (a region, a profile
	// or project name), with the value.
	valued := func(what string, names ...string) []string {
		for _, n := range names {
			if v, w := lookup(n); v != "" {
				return []string{what + " " + v + ", " + from(n, w)}
			}
		}
		return nil
	}
	home := a.Config.UserHome
	file := func(label, override, def string) []string {
		p, named := def, ""
		if override != "" {
			if v, _ := lookup(override); v != "" {
				p, named = config.ExpandHome(v, home), override
			}
		}
		if p == "" {
			return nil
		}
		if _, err := os.Stat(p); err == nil {
			return []string{label + " " + tildePath(p, home) + " (file)"}
		} else if named != "" && errors.Is(err, fs.ErrNotExist) {
			return []string{label + " " + tildePath(p, home) + " (named by " + named + ", but missing)"}
		}
		return nil
	}
	used := func(found []string, provider, keyVar string) []string {
		if provider != chosen || keyVar == "" {
			return found
		}
		for i, f := range found {
			if strings.HasPrefix(f, keyVar+" ") {
				found[i] = f + " — used"
			}
		}
		return found
	}
	geminiKey := ""
	if chosen == config.ProviderGemini {
		geminiKey = geminiKeyVar(lookup)
	}
	anthropicKey, openaiKey := "", ""
	if c.APIKey != "" {
		anthropicKey, openaiKey = "ANTHROPIC_API_KEY", "OPENAI_API_KEY"
	}

	var aws []string
	aws = append(aws, present("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")...)
	aws = append(aws, valued("profile", "AWS_PROFILE")...)
	aws = append(aws, file("shared credentials", "AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, ".aws", "credentials"))...)
	aws = append(aws, file("config", "AWS_CONFIG_FILE", filepath.Join(home, ".aws", "config"))...)
	aws = append(aws, valued("region", "AWS_REGION", "AWS_DEFAULT_REGION")...)

	var gcp []string
	gcp = append(gcp, file("service account or ADC", "GOOGLE_APPLICATION_CREDENTIALS", "")...)
	gcloud := filepath.Join(home, ".config", "gcloud")
	if v, _ := lookup("CLOUDSDK_CONFIG"); v != "" {
		gcloud = config.ExpandHome(v, home)
	}
	gcp = append(gcp, file("gcloud application default credentials", "", filepath.Join(gcloud, "application_default_credentials.json"))...)
	gcp = append(gcp, valued("project", "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT")...)
	gcp = append(gcp, valued("region", "CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION", "GOOGLE_CLOUD_REGION")...)

	return []CredentialReport{
		{Provider: "Anthropic", Found: used(present("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"), config.ProviderAnthropic, anthropicKey),
			Missing: "set ANTHROPIC_API_KEY"},
		{Provider: "OpenAI", Found: used(present("OPENAI_API_KEY", "OPENAI_BASE_URL"), config.ProviderOpenAI, openaiKey),
			Missing: "set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"},
		{Provider: "Gemini", Found: used(present("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"), config.ProviderGemini, geminiKey),
			Missing: "set GEMINI_API_KEY (or GOOGLE_API_KEY)"},
		{Provider: "Amazon Bedrock (AWS)", Found: aws, Missing: "no AWS credentials, profile or region found"},
		{Provider: "Google Vertex AI (Google ADC)", Found: gcp, Missing: "no Google application default credentials, project or region found (a metadata server is not probed)"},
	}
}

// safeURL is u without user info, query or fragment, which may hold secrets.
func safeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "(not a URL)"
	}
	return fmt.Sprintf("%s://%s%s", p.Scheme, p.Host, p.Path)
}

// tildePath shows p under home as ~/….
func tildePath(p, home string) string {
	if home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}
