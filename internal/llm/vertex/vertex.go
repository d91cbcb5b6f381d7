// Package vertex reaches Claude through Google Vertex AI: the Anthropic
// provider (internal/llm/anthropic, its streaming, tool calls, retries and
// errors) with a middleware of ours (rawpredict.go) that sends each request
// to the model's streamRawPredict method with an OAuth access token. The token
// comes from Google's Application Default Credentials (a key file named by
// GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, or the metadata server
// on Google Cloud); model names are mapped to Vertex's ids (ModelID).
package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
)

// Name is the provider name used in settings and errors.
const Name = "vertex"

// URLVar overrides the endpoint (a private endpoint, a gateway or a test
// server); the name is Claude Code's.
const URLVar = "ANTHROPIC_VERTEX_BASE_URL"

const scope = "https://www.googleapis.com/auth/cloud-platform"

// credentialsHelp says where Google credentials come from.
const credentialsHelp = "set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run `gcloud auth application-default login`; " +
	"on Google Cloud (GCE, GKE, Cloud Run) the metadata server's service account is used"

// Options configure a Vertex AI provider. Every value is explicit: the
// caller resolves the environment and settings.json once.
type Options struct {
	Region  string // CLOUD_ML_REGION: us-east5, europe-west1, global, …
	Project string // ANTHROPIC_VERTEX_PROJECT_ID; "" means the credentials' project
	// CredentialsFile is GOOGLE_APPLICATION_CREDENTIALS: a service-account
	// key or an authorized-user file.
	CredentialsFile string
	// ADCFile is gcloud's application default credentials file (ADCPath),
	// used when CredentialsFile is empty and the file exists; with neither,
	// tokens come from the metadata server.
	ADCFile string
	// BaseURL replaces the region's https://<region>-aiplatform.googleapis.com.
	BaseURL string

	HTTPClient   *http.Client // nil means llm.NewHTTPClient(IdleTimeout)
	IdleTimeout  time.Duration
	Retry        *llm.RetryPolicy
	DisableCache bool
}

// ADCPath is where `gcloud auth application-default login` writes the
// credentials: $CLOUDSDK_CONFIG/application_default_credentials.json, by
// default under ~/.config/gcloud.
func ADCPath(home, cloudsdkConfig string) string {
	dir := cloudsdkConfig
	if dir == "" {
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config", "gcloud")
	}
	return filepath.Join(dir, "application_default_credentials.json")
}

// New reads the credentials file (no network) and returns the provider.
// Tokens are fetched when the first request needs one; when that fails, the
// request fails with an llm.ErrAuth error saying which credentials were
// tried and how to supply them.
func New(ctx context.Context, opts Options) (*anthropic.Provider, error) {
	if opts.Region == "" {
		return nil, errors.New("the vertex provider (Google Vertex AI) needs a region: set CLOUD_ML_REGION (for example us-east5, europe-west1 or global)")
	}
	creds, source, err := findCredentials(ctx, opts)
	if err != nil {
		return nil, err
	}
	project := opts.Project
	if project == "" {
		project = creds.ProjectID
	}
	if project == "" {
		return nil, fmt.Errorf("the vertex provider (Google Vertex AI) needs a project: set ANTHROPIC_VERTEX_PROJECT_ID to the Google Cloud project that has Claude enabled (%s has none)", source)
	}
	// Reuse keeps a token until just before it expires, then fetches a new
	// one: one token request per hour, not one per model request.
	tokens := oauth2.ReuseTokenSource(nil, checkedTokens{inner: creds.TokenSource, source: source})
	return anthropic.New(anthropic.Options{
		BaseURL:      opts.BaseURL,
		HTTPClient:   opts.HTTPClient,
		IdleTimeout:  opts.IdleTimeout,
		Retry:        opts.Retry,
		DisableCache: opts.DisableCache,
		Platform: &anthropic.Platform{
			Name:     Name,
			Options:  platformOptions(opts.Region, project, tokens),
			Endpoint: Endpoint(opts.Region),
			URLVar:   URLVar,
			Cred:     "the Google credentials (" + source + ")",
			AuthHint: credentialsHelp,
			AccessHint: "check that the account may use Vertex AI in project " + project + " (roles/aiplatform.user), that the model is enabled there " +
				"in the Model Garden and served in " + opts.Region + " (CLOUD_ML_REGION), and the model (SYNAPSE_MODEL or --model)",
			Model: ModelID,
		},
	}), nil
}

// Endpoint is Vertex AI's endpoint for a region.
func Endpoint(region string) string {
	switch region {
	case "global":
		return "https://aiplatform.googleapis.com"
	case "us", "eu":
		return "https://aiplatform." + region + ".rep.googleapis.com"
	}
	return "https://" + region + "-aiplatform.googleapis.com"
}

// findCredentials is Application Default Credentials in Google's order,
// with every path explicit: the file named by GOOGLE_APPLICATION_CREDENTIALS,
// gcloud's ADC file, the metadata server. source names the one found.
func findCredentials(ctx context.Context, opts Options) (*google.Credentials, string, error) {
	path, source := opts.CredentialsFile, "GOOGLE_APPLICATION_CREDENTIALS="+opts.CredentialsFile
	if path == "" && opts.ADCFile != "" {
		if _, err := os.Stat(opts.ADCFile); err == nil {
			path, source = opts.ADCFile, "gcloud's application default credentials in "+opts.ADCFile
		}
	}
	if path == "" {
		return &google.Credentials{TokenSource: google.ComputeTokenSource("", scope)}, "the metadata server (no GOOGLE_APPLICATION_CREDENTIALS, no gcloud application default credentials)", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("vertex: cannot read the Google credentials (%s): %w; %s", source, err, credentialsHelp)
	}
	// The file is the user's own (their variable, or gcloud's file in their
	// home), and only the types ADC knows are accepted.
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &head)
	t := google.CredentialsType(head.Type)
	switch t {
	case google.ServiceAccount, google.AuthorizedUser, google.ExternalAccount, google.ExternalAccountAuthorizedUser, google.ImpersonatedServiceAccount:
	default:
		return nil, "", fmt.Errorf("vertex: the Google credentials (%s) have type %q, not a service-account key (service_account), an authorized-user file (authorized_user) or workload identity federation (external_account); %s", source, head.Type, credentialsHelp)
	}
	creds, err := google.CredentialsFromJSONWithType(ctx, data, t, scope)
	if err != nil {
		return nil, "", fmt.Errorf("vertex: the Google credentials (%s) are not a usable service-account key or authorized-user file: %w; %s", source, err, credentialsHelp)
	}
	return creds, source, nil
}

// checkedTokens turns a failure to get an access token into an llm.ErrAuth
// error naming the credentials tried (and holding no secret).
type checkedTokens struct {
	inner  oauth2.TokenSource
	source string
}

func (c checkedTokens) Token() (*oauth2.Token, error) {
	t, err := c.inner.Token()
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrAuth, Provider: Name, Err: err,
			Message: "cannot get a Google access token for Vertex AI from " + c.source + " (" + llm.Excerpt(err.Error()) + ")",
			Hint:    credentialsHelp}
	}
	return t, nil
}

// ModelID is Vertex AI's id of a model: a Claude name ("claude-sonnet-4-5",
// or dated "claude-sonnet-4-5-20250929") becomes "claude-sonnet-4-5@20250929";
// anything else (an id with "@" already, another vendor's model) is sent as
// it is.
func ModelID(model string) string {
	if strings.Contains(model, "@") {
		return model
	}
	name, date, ok := llm.ClaudeSnapshot(model)
	if !ok {
		return model
	}
	return name + "@" + date
}
