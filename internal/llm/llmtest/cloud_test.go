package llmtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The event-stream framing is AWS's, byte for byte: lengths and CRC32s as
// the format documents them, and AWS's own decoder reads it back.
func TestEventFrame(t *testing.T) {
	data := []byte(`{"type":"message_stop"}`)
	frame := bedrockChunk(data)
	total, headers := binary.BigEndian.Uint32(frame[0:4]), binary.BigEndian.Uint32(frame[4:8])
	if int(total) != len(frame) {
		t.Errorf("total length %d, frame %d bytes", total, len(frame))
	}
	if crc32.ChecksumIEEE(frame[:8]) != binary.BigEndian.Uint32(frame[8:12]) {
		t.Error("prelude CRC does not match")
	}
	if crc32.ChecksumIEEE(frame[:len(frame)-4]) != binary.BigEndian.Uint32(frame[len(frame)-4:]) {
		t.Error("message CRC does not match")
	}
	msg, err := eventstream.NewDecoder().Decode(bytes.NewReader(frame), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Payload) != len(frame)-12-int(headers)-4 {
		t.Errorf("payload %d bytes", len(msg.Payload))
	}
	for name, want := range map[string]string{":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"} {
		if h := msg.Headers.Get(name); h == nil || h.String() != want {
			t.Errorf("header %s = %v, want %q", name, h, want)
		}
	}
	var chunk struct {
		Bytes string `json:"bytes"`
	}
	if err := json.Unmarshal(msg.Payload, &chunk); err != nil {
		t.Fatal(err)
	}
	if got, _ := base64.StdEncoding.DecodeString(chunk.Bytes); string(got) != string(data) {
		t.Errorf("bytes = %q", got)
	}
}

// The server's SigV4 check accepts a request signed with the test keys and
// refuses one whose body, key or service differs from what was signed.
func TestVerifySigV4(t *testing.T) {
	body := []byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":5}`)
	signed := func(secret, service string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: BedrockAccessKeyID, SecretAccessKey: secret, SessionToken: BedrockSessionToken}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), service, "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := verifySigV4(signed(BedrockSecretAccessKey, "bedrock"), body); err != nil {
		t.Fatalf("a good signature was refused: %v", err)
	}
	for name, tc := range map[string]struct {
		r    *http.Request
		body []byte
		want string
	}{
		"another body":    {signed(BedrockSecretAccessKey, "bedrock"), []byte(`{"max_tokens":500}`), "does not match"},
		"another secret":  {signed("wrong", "bedrock"), body, "does not match"},
		"another service": {signed(BedrockSecretAccessKey, "s3"), body, "'bedrock'"},
		"unsigned":        {httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/model/m/invoke", nil), body, "Authorization"},
	} {
		if err := verifySigV4(tc.r, tc.body); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, tc.want)
		}
	}
}
