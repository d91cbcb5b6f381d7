package vertex

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/session"
)

// testOptions point a provider at srv with a service-account key file whose
// token_uri is srv's token endpoint.
func testOptions(t *testing.T, srv *llmtest.Server, w *llmtest.Waits, maxRetries int) Options {
	t.Helper()
	path, err := srv.VertexCredentialsFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Options{Region: llmtest.VertexRegion, CredentialsFile: path, BaseURL: srv.URL(), Retry: llmtest.RetryPolicy(maxRetries, w)}
}

// newProvider makes the providers of the shared checks, at testOptions.
func newProvider(t *testing.T) llmtest.NewProvider {
	return func(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) llm.Provider {
		return mustNew(t, testOptions(t, srv, w, maxRetries))
	}
}

func mustNew(t *testing.T, o Options) llm.Provider {
	t.Helper()
	p, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request(msgs ...llm.Message) llm.Request {
	return llmtest.BaseRequest("claude-sonnet-4-5", msgs...)
}

// A text answer through streamRawPredict: the provider gets an access token
// from the key file's token endpoint (the server checks the signed JWT
// assertion), sends it as a bearer token, names the project (from the key
// file), region and Vertex's model id in the path, anthropic_version and
// no model in the body; the token is reused by the next request.
func TestTextAnswer(t *testing.T) {
	srv := llmtest.New(t)
	p := newProvider(t)(srv, nil, 0)
	_, r := llmtest.CheckTextAnswer(t, p, srv, request())
	const path = "/v1/projects/llmtest-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
	if r.Format != llmtest.FormatVertex || r.Model != "claude-sonnet-4-5@20250929" || r.Path != path || !r.Stream {
		t.Errorf("request = %s %s %q stream=%v", r.Format, r.Path, r.Model, r.Stream)
	}
	if a := r.Header.Get("Authorization"); a != "Bearer ya29.llmtest-1" {
		t.Errorf("Authorization = %q", a)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Raw, &body); err != nil || body["anthropic_version"] != "vertex-2023-10-16" {
		t.Errorf("anthropic_version = %v (%v)", body["anthropic_version"], err)
	}
	srv.Script(llmtest.TextTurn("again"))
	if _, err := p.Stream(context.Background(), request(), nil); err != nil {
		t.Fatal(err)
	}
	if n := srv.TokensIssued(); n != 1 {
		t.Errorf("%d tokens issued for two requests, want 1 (reused)", n)
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	llmtest.CheckToolRoundTrip(t, newProvider(t), request)
}

// Quota (429 RESOURCE_EXHAUSTED), an unavailable service (503) and an
// overloaded_error event inside the stream are retried; a permission error
// is not, and says what to check.
func TestRetriesAndErrors(t *testing.T) {
	llmtest.CheckErrors(t, newProvider(t), request(), []llmtest.ErrorCase{
		{Name: "429 then 503 then an answer", MaxRetries: 3,
			Script: []llmtest.Turn{
				{Status: 429, Error: llmtest.APIError{Message: "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model."}},
				{Status: 503, Error: llmtest.APIError{Message: "The service is currently unavailable."}},
				llmtest.TextTurn("ok"),
			},
			WantTries: 3},
		{Name: "an error event in the stream, then an answer", MaxRetries: 3,
			Script:    []llmtest.Turn{{StreamError: &llmtest.APIError{Type: "overloaded_error", Message: "Overloaded"}}, llmtest.TextTurn("ok")},
			WantTries: 2},
		{Name: "permission denied: not retried", MaxRetries: 3,
			Script:    []llmtest.Turn{{Status: 403, Error: llmtest.APIError{Message: "Permission 'aiplatform.endpoints.predict' denied on resource."}}},
			WantKind:  llm.ErrAuth,
			WantInErr: []string{"vertex: the Google credentials", "may not use this model", "aiplatform.endpoints.predict", "roles/aiplatform.user", "llmtest-project"},
			WantTries: 1},
	})
}

func TestStalledServer(t *testing.T) {
	llmtest.CheckStall(t, URLVar, func(srv *llmtest.Server, idle time.Duration, maxRetries int) llm.Provider {
		o := testOptions(t, srv, &llmtest.Waits{}, maxRetries)
		o.IdleTimeout = idle
		return mustNew(t, o)
	})
}

func TestCancelStopsPromptly(t *testing.T) {
	llmtest.CheckCancel(t, func(srv *llmtest.Server) llm.Provider { return newProvider(t)(srv, nil, 3) })
}

// Usage with cache tokens arrives as Anthropic's, and Vertex's model id is
// priced as the Claude model it is.
func TestUsageAndCost(t *testing.T) {
	llmtest.CheckClaudeUsageAndCost(t, newProvider(t), request(), session.DefaultPricing().Cost, "claude-sonnet-4-5@20250929")
}

// Credentials the token endpoint refuses (a key it did not issue) fail the
// request with an error naming the credentials file, never a secret; a
// token the API does not know is refused by it.
func TestRefusedCredentials(t *testing.T) {
	srv := llmtest.New(t)
	other := llmtest.New(t)
	path, err := other.VertexCredentialsFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// other's key, pointed at srv's token endpoint: the assertion's signature does not check out.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), other.URL(), srv.URL()))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := New(context.Background(), Options{Region: "us-east5", CredentialsFile: path, BaseURL: srv.URL(), Retry: llmtest.RetryPolicy(3, nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), request(), nil)
	if llmtest.KindOf(err) != llm.ErrAuth {
		t.Fatalf("err = %v (kind %q)", err, llmtest.KindOf(err))
	}
	for _, want := range []string{"cannot get a Google access token", "GOOGLE_APPLICATION_CREDENTIALS=" + path, "invalid_grant"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") || srv.Count() != 0 {
		t.Errorf("err = %v; %d requests reached the model", err, srv.Count())
	}

	// A token from another server is refused by this one's API.
	p, err = New(context.Background(), Options{Region: "us-east5", Project: llmtest.VertexProject, CredentialsFile: mustFile(t, other), BaseURL: srv.URL(), Retry: llmtest.RetryPolicy(3, nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), request(), nil)
	if llmtest.KindOf(err) != llm.ErrAuth || !strings.Contains(err.Error(), "the server refused the Google credentials") || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("err = %v", err)
	}
}

func mustFile(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	path, err := srv.VertexCredentialsFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Missing settings say which one and how to supply it.
func TestMissingSettings(t *testing.T) {
	dir := t.TempDir()
	authorizedUser := filepath.Join(dir, "adc.json")
	if err := os.WriteFile(authorizedUser, []byte(`{"type":"authorized_user","client_id":"id","client_secret":"s3cr3t","refresh_token":"r"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wrongType := filepath.Join(dir, "other.json")
	if err := os.WriteFile(wrongType, []byte(`{"type":"api_key","key":"s3cr3t"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"no region", Options{Project: "p"}, []string{"CLOUD_ML_REGION"}},
		{"a file of another kind", Options{Region: "us-east5", CredentialsFile: wrongType}, []string{`type "api_key"`, "service_account"}},
		{"unreadable key file", Options{Region: "us-east5", CredentialsFile: filepath.Join(dir, "missing.json")},
			[]string{"GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(dir, "missing.json"), "gcloud auth application-default login"}},
		{"no project: an authorized-user file has none", Options{Region: "us-east5", ADCFile: authorizedUser},
			[]string{"ANTHROPIC_VERTEX_PROJECT_ID", "gcloud's application default credentials in " + authorizedUser}},
		{"no file at all: the metadata server, and no project", Options{Region: "us-east5", ADCFile: filepath.Join(dir, "none.json")},
			[]string{"ANTHROPIC_VERTEX_PROJECT_ID", "metadata server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

func TestModelIDAndEndpoint(t *testing.T) {
	for _, tt := range []struct{ model, want string }{
		{"claude-sonnet-4-5", "claude-sonnet-4-5@20250929"},
		{"claude-opus-4-5-20251101", "claude-opus-4-5@20251101"},
		{"claude-haiku-4-5", "claude-haiku-4-5@20251001"},
		{"claude-opus-4-1", "claude-opus-4-1@20250805"},
		{"claude-sonnet-4-0", "claude-sonnet-4@20250514"},
		{"claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet-v2@20241022"},
		{"claude-future-9", "claude-future-9"},
	} {
		if got := ModelID(tt.model); got != tt.want {
			t.Errorf("ModelID(%q) = %q, want %q", tt.model, got, tt.want)
		}
	}
	for region, want := range map[string]string{
		"us-east5": "https://us-east5-aiplatform.googleapis.com", "global": "https://aiplatform.googleapis.com", "eu": "https://aiplatform.eu.rep.googleapis.com",
	} {
		if got := Endpoint(region); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", region, got, want)
		}
	}
	if got := ADCPath("/home/u", ""); got != "/home/u/.config/gcloud/application_default_credentials.json" {
		t.Errorf("ADCPath = %q", got)
	}
}
