package vertex

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// The middleware alone: a request that does not stream goes to rawPredict,
// a gateway's path prefix is kept, the body keeps its bytes (no HTML
// escaping) and an anthropic_version already set, and loses the model.
func TestRawPredictRewrite(t *testing.T) {
	tokens := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"})
	mw := rawPredict("europe-west1", "proj", tokens)
	body := `{"model":"claude-sonnet-4-5@20250929","anthropic_version":"vertex-custom","messages":[{"role":"user","content":"a<b && c>d"}]}`
	req, err := http.NewRequest(http.MethodPost, "https://gateway.example/vertex/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var sent *http.Request
	var sentBody []byte
	_, err = mw(req, func(r *http.Request) (*http.Response, error) {
		sent = r
		sentBody, _ = io.ReadAll(r.Body)
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/vertex/v1/projects/proj/locations/europe-west1/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
	if sent.URL.Path != path || sent.Header.Get("Authorization") != "Bearer tok" {
		t.Errorf("sent %s with Authorization %q", sent.URL.Path, sent.Header.Get("Authorization"))
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(sentBody, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["model"]; ok || string(got["anthropic_version"]) != `"vertex-custom"` || !strings.Contains(string(sentBody), "a<b && c>d") {
		t.Errorf("body %s", sentBody)
	}
	if sent.ContentLength != int64(len(sentBody)) {
		t.Errorf("Content-Length %d for %d bytes", sent.ContentLength, len(sentBody))
	}
	if again, err := sent.GetBody(); err != nil {
		t.Error(err)
	} else if b, _ := io.ReadAll(again); string(b) != string(sentBody) {
		t.Errorf("GetBody gives %s", b)
	}
}
