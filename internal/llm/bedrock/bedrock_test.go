package bedrock

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/session"
)

// testOptions point a provider at srv with the keys it checks signatures with.
func testOptions(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) Options {
	return Options{
		Region:      llmtest.BedrockRegion,
		AccessKeyID: llmtest.BedrockAccessKeyID, SecretAccessKey: llmtest.BedrockSecretAccessKey, SessionToken: llmtest.BedrockSessionToken,
		NoIMDS:  true,
		BaseURL: srv.URL(),
		Retry:   llmtest.RetryPolicy(maxRetries, w),
	}
}

// newProvider makes the providers of the shared checks, at testOptions.
func newProvider(t *testing.T) llmtest.NewProvider {
	return func(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) llm.Provider {
		return mustNew(t, testOptions(srv, w, maxRetries))
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

// isolateAWS keeps the developer's own AWS setup (files, profile, keys,
// container credentials) out of a test of the credential chain.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	for _, v := range []string{"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_BEARER_TOKEN_BEDROCK"} {
		t.Setenv(v, "")
	}
}

func request(msgs ...llm.Message) llm.Request {
	return llmtest.BaseRequest("claude-sonnet-4-5", msgs...)
}

// A text answer through InvokeModelWithResponseStream: the request is
// SigV4-signed (the server recomputes the signature), names Bedrock's
// inference profile in the path, carries anthropic_version and no model or
// stream field; the answer arrives in event-stream framing.
func TestTextAnswer(t *testing.T) {
	srv := llmtest.New(t)
	_, r := llmtest.CheckTextAnswer(t, newProvider(t)(srv, nil, 0), srv, request())
	const id = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	if r.Format != llmtest.FormatBedrock || r.Model != id || r.Path != "/model/"+id+"/invoke-with-response-stream" || !r.Stream {
		t.Errorf("request = %s %s %q stream=%v", r.Format, r.Path, r.Model, r.Stream)
	}
	if a := r.Header.Get("Authorization"); !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential="+llmtest.BedrockAccessKeyID+"/") || !strings.Contains(a, "/us-east-1/bedrock/aws4_request") {
		t.Errorf("Authorization = %q", a)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Raw, &body); err != nil || body["anthropic_version"] != "bedrock-2023-05-31" {
		t.Errorf("anthropic_version = %v (%v)", body["anthropic_version"], err)
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	llmtest.CheckToolRoundTrip(t, newProvider(t), request)
}

// Throttling (HTTP 429 ThrottlingException, with retry-after), an
// unavailable service (503) and an exception inside the stream are retried;
// an access error is not, and says what to check.
func TestRetriesAndErrors(t *testing.T) {
	llmtest.CheckErrors(t, newProvider(t), request(), []llmtest.ErrorCase{
		{Name: "429 then 503 then an answer", MaxRetries: 3,
			Script: []llmtest.Turn{
				{Status: 429, RetryAfter: "2", Error: llmtest.APIError{Message: "Too many requests, please wait before trying again."}},
				{Status: 503, Error: llmtest.APIError{Message: "Bedrock is unable to process your request."}},
				llmtest.TextTurn("ok"),
			},
			WantTries: 3, FirstWait: 2 * time.Second},
		{Name: "an exception in the stream, then an answer", MaxRetries: 3,
			Script:    []llmtest.Turn{{StreamError: &llmtest.APIError{Type: "overloaded_error", Message: "Model is getting throttled."}}, llmtest.TextTurn("ok")},
			WantTries: 2},
		{Name: "access denied: not retried", MaxRetries: 3,
			Script:    []llmtest.Turn{{Status: 403, Error: llmtest.APIError{Message: "You don't have access to the model with the specified model ID."}}},
			WantKind:  llm.ErrAuth,
			WantInErr: []string{"bedrock: the AWS credentials may not use this model", "You don't have access to the model", "model access page", "us-east-1"},
			WantTries: 1},
		{Name: "input too long: the prompt-too-long refusal", MaxRetries: 3,
			Script:    []llmtest.Turn{{Status: 400, Error: llmtest.APIError{Message: "Input is too long for requested model."}}},
			WantKind:  llm.ErrBadRequest,
			WantInErr: []string{"Input is too long", "context window"},
			WantTries: 1},
	})
}

func TestStalledServer(t *testing.T) {
	llmtest.CheckStall(t, URLVar, func(srv *llmtest.Server, idle time.Duration, maxRetries int) llm.Provider {
		o := testOptions(srv, &llmtest.Waits{}, maxRetries)
		o.IdleTimeout = idle
		return mustNew(t, o)
	})
}

func TestCancelStopsPromptly(t *testing.T) {
	llmtest.CheckCancel(t, func(srv *llmtest.Server) llm.Provider { return newProvider(t)(srv, nil, 3) })
}

// Usage with cache tokens arrives as Anthropic's, and Bedrock's model id is
// priced as the Claude model it is.
func TestUsageAndCost(t *testing.T) {
	llmtest.CheckClaudeUsageAndCost(t, newProvider(t), request(), session.DefaultPricing().Cost, "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
}

// A request signed with the wrong secret is refused by the server's
// signature check; the error names the AWS credentials and never the secret.
func TestWrongSecretRefused(t *testing.T) {
	srv := llmtest.New(t)
	o := testOptions(srv, nil, 3)
	o.SecretAccessKey = "not-the-secret-XYZ"
	p, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), request(), nil)
	if llmtest.KindOf(err) != llm.ErrAuth || !strings.Contains(err.Error(), "the server refused the AWS credentials") || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "not-the-secret-XYZ") {
		t.Errorf("the error shows the secret: %v", err)
	}
	if len(srv.AuthFailures()) != 1 || srv.Count() != 0 {
		t.Errorf("auth failures %v, %d requests reached the model", srv.AuthFailures(), srv.Count())
	}
}

// With no credentials anywhere, the request fails before it is sent, saying
// how to supply them; without a region, New says how to set one.
func TestMissingCredentialsAndRegion(t *testing.T) {
	isolateAWS(t)
	srv := llmtest.New(t)
	p, err := New(context.Background(), Options{Region: "us-east-1", NoIMDS: true, BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), request(), nil)
	if llmtest.KindOf(err) != llm.ErrAuth {
		t.Fatalf("err = %v (kind %q)", err, llmtest.KindOf(err))
	}
	for _, want := range []string{"no AWS credentials found", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "instance or task role"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if srv.Count() != 0 || len(srv.AuthFailures()) != 0 {
		t.Errorf("a request without credentials was sent")
	}

	_, err = New(context.Background(), Options{NoIMDS: true})
	if err == nil || !strings.Contains(err.Error(), "set AWS_REGION") {
		t.Errorf("no region: err = %v", err)
	}
	_, err = New(context.Background(), Options{Region: "us-east-1", AccessKeyID: "AKID"})
	if err == nil || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY is not set") {
		t.Errorf("half a key: err = %v", err)
	}
}

// A Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) is sent as a bearer token,
// not a signature.
func TestBearerToken(t *testing.T) {
	isolateAWS(t)
	srv := llmtest.New(t)
	o := Options{Region: "us-east-1", NoIMDS: true, BaseURL: srv.URL(), BearerToken: "bedrock-api-key-123", Retry: llmtest.RetryPolicy(0, nil)}
	p, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), request(), nil)
	// The test server checks SigV4 only, so it refuses the bearer token; what matters is what was sent.
	if llmtest.KindOf(err) != llm.ErrAuth || strings.Contains(err.Error(), "bedrock-api-key-123") {
		t.Fatalf("err = %v", err)
	}
	if f := srv.AuthFailures(); len(f) != 1 || !strings.Contains(f[0], "no AWS4-HMAC-SHA256 Authorization header") {
		t.Errorf("auth failures = %v", f)
	}
}

func TestModelID(t *testing.T) {
	tests := []struct{ model, region, want string }{
		{"claude-sonnet-4-5", "us-east-1", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"claude-sonnet-4-5-20250929", "us-west-2", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"claude-opus-4-5", "eu-central-1", "eu.anthropic.claude-opus-4-5-20251101-v1:0"},
		{"claude-haiku-4-5", "ap-northeast-1", "apac.anthropic.claude-haiku-4-5-20251001-v1:0"},
		{"claude-sonnet-4", "us-gov-west-1", "us-gov.anthropic.claude-sonnet-4-20250514-v1:0"},
		{"claude-3-7-sonnet", "ca-central-1", "anthropic.claude-3-7-sonnet-20250219-v1:0"},
		{"global.anthropic.claude-sonnet-4-5-20250929-v1:0", "us-east-1", "global.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"anthropic.claude-3-haiku-20240307-v1:0", "us-east-1", "anthropic.claude-3-haiku-20240307-v1:0"},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", "us-east-1", "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc"},
		{"claude-future-9", "us-east-1", "claude-future-9"},
		{"meta.llama3-70b-instruct-v1:0", "us-east-1", "meta.llama3-70b-instruct-v1:0"},
	}
	for _, tt := range tests {
		if got := ModelID(tt.model, tt.region); got != tt.want {
			t.Errorf("ModelID(%q, %q) = %q, want %q", tt.model, tt.region, got, tt.want)
		}
	}
}
