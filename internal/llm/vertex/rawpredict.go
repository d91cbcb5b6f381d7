package vertex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/option"
	"golang.org/x/oauth2"
)

// The SDK's own vertex package (github.com/anthropics/anthropic-sdk-go/vertex)
// would do this, but it builds its HTTP client with google.golang.org/api's
// transport, which links gRPC, OpenCensus and OpenTelemetry into the binary:
// some 250 packages whose init and pages every run of synapse paid for,
// Vertex or not. What Vertex needs is small, so it is done here.

// apiVersion is the Messages API version Vertex AI serves Claude under; it
// goes in the body, where the Anthropic API takes a header.
const apiVersion = "vertex-2023-10-16"

// platformOptions point the Anthropic client at region's Vertex AI endpoint
// and add the middleware that turns a Messages request into a Vertex one.
// They are applied after the provider's own options, so the middleware runs
// last, closest to the wire (the provider's middleware still sees an
// Anthropic-shaped request), and Options.BaseURL can still replace the
// endpoint.
func platformOptions(region, project string, tokens oauth2.TokenSource) []option.RequestOption {
	return []option.RequestOption{
		option.WithBaseURL(Endpoint(region) + "/"),
		option.WithMiddleware(rawPredict(region, project, tokens)),
	}
}

// rawPredict rewrites POST …/v1/messages to the model's streamRawPredict
// (or rawPredict, for a request that does not stream) method: the model
// moves from the body to the path, anthropic_version is added to the body,
// and the request carries a bearer token from tokens. A base URL with a
// path (a gateway) keeps its prefix.
func rawPredict(region, project string, tokens oauth2.TokenSource) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		prefix, isMessages := strings.CutSuffix(r.URL.Path, "/v1/messages")
		if r.Method == http.MethodPost && isMessages && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			_ = r.Body.Close()
			if err != nil {
				return nil, fmt.Errorf("vertex: read the request body: %w", err)
			}
			body, model, stream, err := vertexBody(body)
			if err != nil {
				return nil, err
			}
			method := "rawPredict"
			if stream {
				method = "streamRawPredict"
			}
			r.URL.Path = prefix + "/v1/projects/" + project + "/locations/" + region + "/publishers/anthropic/models/" + model + ":" + method
			r.URL.RawPath = ""
			setBody(r, body)
		}
		// Token errors are checkedTokens' *llm.Error: the provider reports
		// them as they are (an authentication failure, not a network one).
		tok, err := tokens.Token()
		if err != nil {
			return nil, fmt.Errorf("vertex: %w", err)
		}
		tok.SetAuthHeader(r)
		return next(r)
	}
}

// vertexBody moves the model out of a Messages request body and sets
// anthropic_version (unless the body has one). Only the top-level keys are
// decoded; their values are passed on byte for byte.
func vertexBody(body []byte) (_ []byte, model string, stream bool, _ error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, "", false, fmt.Errorf("vertex: the request body is not a JSON object (%w); this is a bug in synapse, please report it", err)
	}
	if err := json.Unmarshal(fields["model"], &model); err != nil || model == "" {
		return nil, "", false, fmt.Errorf("vertex: the request names no model; set one with --model or SYNAPSE_MODEL")
	}
	if s, ok := fields["stream"]; ok {
		_ = json.Unmarshal(s, &stream)
	}
	delete(fields, "model")
	if _, ok := fields["anthropic_version"]; !ok {
		fields["anthropic_version"] = json.RawMessage(`"` + apiVersion + `"`)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // leave the text as the provider encoded it
	if err := enc.Encode(fields); err != nil {
		return nil, "", false, fmt.Errorf("vertex: re-encode the request body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), model, stream, nil
}

// setBody replaces r's body, keeping it replayable (GetBody) for the
// transport's own retries of a request that never reached the server.
func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
}
