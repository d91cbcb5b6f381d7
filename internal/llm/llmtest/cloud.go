package llmtest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Claude on the cloud platforms: Amazon Bedrock's InvokeModel and
// InvokeModelWithResponseStream (POST /model/{modelId}/invoke[-with-response-stream],
// SigV4-signed, the stream in AWS event-stream framing) and Google Vertex
// AI's rawPredict and streamRawPredict (POST /v1/projects/{p}/locations/{r}/
// publishers/anthropic/models/{m}:streamRawPredict, an OAuth bearer token,
// the stream as Anthropic's SSE). Both carry the Anthropic Messages body
// without "model" (it is in the path) and with "anthropic_version".

// The credentials this server accepts. Bedrock requests must be signed with
// the AWS keys (any region; the service must be "bedrock"); Vertex requests
// must carry a token this server issued at /token for its service-account
// key (VertexCredentialsFile).
const (
	BedrockAccessKeyID     = "AKIDLLMTESTEXAMPLE"
	BedrockSecretAccessKey = "llmtest/bedrock/secret+key"
	BedrockSessionToken    = "llmtest-session-token"
	BedrockRegion          = "us-east-1"

	VertexProject = "llmtest-project"
	VertexRegion  = "us-east5"
	vertexEmail   = "llmtest@llmtest-project.iam.gserviceaccount.com"
)

// Bedrock's and Vertex's anthropic_version values.
const (
	bedrockVersion = "bedrock-2023-05-31"
	vertexVersion  = "vertex-2023-10-16"
)

var (
	bedrockPath = regexp.MustCompile(`^/model/([^/]+)/(invoke|invoke-with-response-stream)$`)
	vertexPath  = regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):(rawPredict|streamRawPredict)$`)
)

// BedrockEnv returns environment entries pointing a bedrock provider here,
// with the AWS keys this server checks signatures with.
func (s *Server) BedrockEnv() []string {
	return []string{
		"CLAUDE_CODE_USE_BEDROCK=1",
		"ANTHROPIC_BEDROCK_BASE_URL=" + s.URL(),
		"AWS_REGION=" + BedrockRegion,
		"AWS_ACCESS_KEY_ID=" + BedrockAccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + BedrockSecretAccessKey,
		"AWS_SESSION_TOKEN=" + BedrockSessionToken,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// VertexEnv returns environment entries pointing a vertex provider here,
// with a service-account key file written in dir (VertexCredentialsFile).
func (s *Server) VertexEnv(dir string) ([]string, error) {
	path, err := s.VertexCredentialsFile(dir)
	if err != nil {
		return nil, err
	}
	return []string{
		"CLAUDE_CODE_USE_VERTEX=1",
		"ANTHROPIC_VERTEX_BASE_URL=" + s.URL(),
		"ANTHROPIC_VERTEX_PROJECT_ID=" + VertexProject,
		"CLOUD_ML_REGION=" + VertexRegion,
		"GOOGLE_APPLICATION_CREDENTIALS=" + path,
	}, nil
}

// VertexCredentialsFile writes a service-account key file in dir whose
// token_uri is this server's /token and returns its path. The server checks
// the JWT assertion a client sends there against the key's public half and
// answers with an access token that Vertex requests must then carry.
func (s *Server) VertexCredentialsFile(dir string) (string, error) {
	key, err := s.vertexKey()
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	data := mustJSON(obj{
		"type":                        "service_account",
		"project_id":                  VertexProject,
		"private_key_id":              "llmtest-key-1",
		"private_key":                 string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":                vertexEmail,
		"client_id":                   "100000000000000000001",
		"auth_uri":                    s.URL() + "/auth",
		"token_uri":                   s.URL() + "/token",
		"auth_provider_x509_cert_url": s.URL() + "/certs",
		"universe_domain":             "googleapis.com",
	})
	path := filepath.Join(dir, "llmtest-vertex-key.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// vertexKey is the server's service-account key, made on first use.
func (s *Server) vertexKey() (*rsa.PrivateKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saKey == nil {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		s.saKey = key
	}
	return s.saKey, nil
}

// TokensIssued counts the access tokens /token has issued.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

// AuthFailures describes the requests refused because their signature or
// token did not check out; they reach neither the script nor Requests.
func (s *Server) AuthFailures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.authFailures...)
}

func (s *Server) authFailed(format, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authFailures = append(s.authFailures, format+": "+why)
}

// cloudRoute recognises a Bedrock or Vertex request: its format, model,
// whether it streams (from the path), and the body check result.
type cloudRoute struct {
	format, model string
	stream        bool // from the path; Vertex's body says it too
}

func routeCloud(r *http.Request) (cloudRoute, bool) {
	if r.Method != http.MethodPost {
		return cloudRoute{}, false
	}
	if m := bedrockPath.FindStringSubmatch(r.URL.Path); m != nil {
		return cloudRoute{format: FormatBedrock, model: m[1], stream: m[2] == "invoke-with-response-stream"}, true
	}
	if m := vertexPath.FindStringSubmatch(r.URL.Path); m != nil {
		return cloudRoute{format: FormatVertex, model: m[3], stream: m[4] == "streamRawPredict"}, true
	}
	return cloudRoute{}, false
}

// checkCloud checks a cloud request's credentials and body as the service
// would; a refusal is written and false returned.
func (s *Server) checkCloud(w http.ResponseWriter, r *http.Request, rt cloudRoute, body []byte) bool {
	if rt.format == FormatBedrock {
		if err := verifySigV4(r, body); err != nil {
			s.authFailed(rt.format, err.Error())
			writeError(w, rt.format, http.StatusForbidden, APIError{Type: "InvalidSignatureException",
				Message: "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."}, "", "")
			return false
		}
	} else {
		if err := s.checkBearer(r); err != nil {
			s.authFailed(rt.format, err.Error())
			writeError(w, rt.format, http.StatusUnauthorized, APIError{Message: err.Error()}, "", "")
			return false
		}
		if m := vertexPath.FindStringSubmatch(r.URL.Path); m[1] != VertexProject {
			writeError(w, rt.format, http.StatusForbidden, APIError{Message: fmt.Sprintf("Permission denied on resource project %s.", m[1])}, "", "")
			return false
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		writeError(w, rt.format, http.StatusBadRequest, APIError{Message: "llmtest: request body is not valid JSON: " + err.Error()}, "", "")
		return false
	}
	want := bedrockVersion
	if rt.format == FormatVertex {
		want = vertexVersion
	}
	var version string
	_ = json.Unmarshal(fields["anthropic_version"], &version)
	if version != want {
		writeError(w, rt.format, http.StatusBadRequest, APIError{Message: fmt.Sprintf("anthropic_version is %q, want %q", version, want)}, "", "")
		return false
	}
	extraneous := []string{"model"}
	if rt.format == FormatBedrock {
		extraneous = append(extraneous, "stream")
	}
	for _, k := range extraneous {
		if _, ok := fields[k]; ok {
			// Bedrock's wording for a key the model's schema does not know.
			writeError(w, rt.format, http.StatusBadRequest, APIError{Message: "Malformed input request: #: extraneous key [" + k + "] is not permitted, please reformat your input and try again."}, "", "")
			return false
		}
	}
	return true
}

// verifySigV4 recomputes the request's AWS Signature Version 4 with the
// test keys, from the headers it says it signed and the body as received,
// and compares it with the one sent.
func verifySigV4(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return errors.New("missing Authentication Token: no AWS4-HMAC-SHA256 Authorization header")
	}
	parts := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		parts[k] = v
	}
	scope := strings.Split(parts["Credential"], "/") // AKID/date/region/service/aws4_request
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return fmt.Errorf("malformed credential scope %q", parts["Credential"])
	}
	if scope[0] != BedrockAccessKeyID {
		return fmt.Errorf("the security token included in the request is invalid: unknown access key %q", scope[0])
	}
	if scope[3] != "bedrock" {
		return fmt.Errorf("credential should be scoped to correct service: 'bedrock', not %q", scope[3])
	}
	if tok := r.Header.Get("X-Amz-Security-Token"); tok != BedrockSessionToken {
		return errors.New("the security token included in the request is invalid: X-Amz-Security-Token is not the session token")
	}
	signedAt, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date %q: %w", r.Header.Get("X-Amz-Date"), err)
	}
	if scope[1] != signedAt.Format("20060102") {
		return fmt.Errorf("the credential scope's date %s is not X-Amz-Date's", scope[1])
	}
	// The path as sent, escapes included (the model id's ":" is "%3A"): SigV4 signs it escaped again.
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	check, err := http.NewRequest(r.Method, u.String(), nil)
	if err != nil {
		return err
	}
	check.URL, check.Host = u, r.Host
	signed := strings.Split(parts["SignedHeaders"], ";")
	if !slices.Contains(signed, "host") || !slices.Contains(signed, "x-amz-date") {
		return fmt.Errorf("SignedHeaders %q must include host and x-amz-date", parts["SignedHeaders"])
	}
	for _, h := range signed {
		switch h {
		case "host":
		case "content-length":
			check.ContentLength = int64(len(body))
		default:
			check.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: BedrockAccessKeyID, SecretAccessKey: BedrockSecretAccessKey, SessionToken: BedrockSessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, check, hex.EncodeToString(sum[:]), "bedrock", scope[2], signedAt); err != nil {
		return err
	}
	if got := check.Header.Get("Authorization"); got != auth {
		return fmt.Errorf("the request signature we calculated does not match the signature you provided (want %q)", got)
	}
	return nil
}

// checkBearer checks a Vertex request's access token.
func (s *Server) checkBearer(r *http.Request) error {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return errors.New("request is missing required authentication credential: expected an OAuth 2 access token")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.tokens, tok) {
		return errors.New("request had invalid authentication credentials: the access token was not issued by this server")
	}
	return nil
}

// serveToken is Google's OAuth token endpoint for a service account: a
// JWT-bearer grant whose assertion is signed with the account's key.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	fail := func(why string) {
		s.authFailed("token", why)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(mustJSON(obj{"error": "invalid_grant", "error_description": why}))
	}
	if err := r.ParseForm(); err != nil {
		fail(err.Error())
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		fail("unsupported grant_type " + g)
		return
	}
	s.mu.Lock()
	key := s.saKey
	s.mu.Unlock()
	if key == nil {
		fail("no service-account key was issued by this server")
		return
	}
	if err := checkJWT(r.PostForm.Get("assertion"), &key.PublicKey, s.URL()+"/token"); err != nil {
		fail("Invalid JWT: " + err.Error())
		return
	}
	s.mu.Lock()
	tok := fmt.Sprintf("ya29.llmtest-%d", len(s.tokens)+1)
	s.tokens = append(s.tokens, tok)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(mustJSON(obj{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"}))
}

// checkJWT verifies an RS256 assertion and its claims.
func checkJWT(assertion string, pub *rsa.PublicKey, aud string) error {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return err
	}
	var c struct {
		Iss   string `json:"iss"`
		Aud   string `json:"aud"`
		Scope string `json:"scope"`
		Exp   int64  `json:"exp"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return err
	}
	switch {
	case c.Iss != vertexEmail:
		return fmt.Errorf("iss %q", c.Iss)
	case c.Aud != aud:
		return fmt.Errorf("aud %q, want %q", c.Aud, aud)
	case !slices.Contains(strings.Fields(c.Scope), "https://www.googleapis.com/auth/cloud-platform"):
		return fmt.Errorf("scope %q lacks cloud-platform", c.Scope)
	case time.Unix(c.Exp, 0).Before(time.Now()):
		return errors.New("expired")
	}
	return nil
}

// bedrockErrorTypes are Bedrock's exception names by HTTP status.
var bedrockErrorTypes = map[int]string{
	400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
	408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
	500: "InternalServerException", 503: "ServiceUnavailableException",
}

// googleStatus is Google's canonical error status by HTTP status.
var googleStatus = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

// cloudErrorBody is Bedrock's or Vertex's error response, headers set.
func cloudErrorBody(w http.ResponseWriter, format string, status int, e APIError) any {
	if format == FormatBedrock {
		name := e.Type
		if name == "" || strings.Contains(name, "_") { // an Anthropic type: Bedrock's name for the status
			name = bedrockErrorTypes[status]
			if name == "" {
				name = "InternalServerException"
			}
		}
		w.Header().Set("X-Amzn-ErrorType", name+":http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.Header().Set("X-Amzn-RequestId", "llmtest-request")
		return obj{"message": e.Message}
	}
	st := googleStatus[status]
	if st == "" {
		st = "UNKNOWN"
	}
	return obj{"error": obj{"code": status, "message": e.Message, "status": st}}
}

// bedrockStreamException is the event-stream exception Bedrock sends for an
// error in the middle of a stream, by the Anthropic error type scripted.
func bedrockStreamException(anthropicType string) string {
	switch anthropicType {
	case "overloaded_error":
		return "serviceUnavailableException"
	case "rate_limit_error":
		return "throttlingException"
	case "invalid_request_error":
		return "validationException"
	case "api_error":
		return "internalServerException"
	}
	return anthropicType
}

// eventFrame encodes one AWS event-stream message: a prelude (total length,
// headers length, both big-endian uint32, and the prelude's CRC32), the
// headers (name length byte, name, value type 7 = string, value length
// uint16, value), the payload, and the CRC32 of everything before it.
func eventFrame(headers [][2]string, payload []byte) []byte {
	var hb bytes.Buffer
	for _, h := range headers {
		hb.WriteByte(byte(len(h[0])))
		hb.WriteString(h[0])
		hb.WriteByte(7)
		_ = binary.Write(&hb, binary.BigEndian, uint16(len(h[1])))
		hb.WriteString(h[1])
	}
	total := 12 + hb.Len() + len(payload) + 4
	out := make([]byte, 0, total)
	out = binary.BigEndian.AppendUint32(out, uint32(total))
	out = binary.BigEndian.AppendUint32(out, uint32(hb.Len()))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
	out = append(out, hb.Bytes()...)
	out = append(out, payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

// bedrockChunk is one Anthropic stream event as Bedrock sends it: a
// "chunk" event whose payload holds the event's JSON in base64 (and "p",
// padding that hides the event's length).
func bedrockChunk(data []byte) []byte {
	payload := mustJSON(obj{"bytes": base64.StdEncoding.EncodeToString(data), "p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"[:len(data)%40]})
	return eventFrame([][2]string{
		{":event-type", "chunk"},
		{":content-type", "application/json"},
		{":message-type", "event"},
	}, payload)
}

// bedrockException is an event-stream exception message.
func bedrockException(name, message string) []byte {
	return eventFrame([][2]string{
		{":exception-type", name},
		{":content-type", "application/json"},
		{":message-type", "exception"},
	}, mustJSON(obj{"message": message}))
}
