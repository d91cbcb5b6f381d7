package debuglog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRedact(t *testing.T) {
	key := "my-secret-api-key-value-123"
	tests := []struct{ in, want string }{
		{"calling with " + key, "calling with " + Redacted},
		{"sk-ant-api03-abcdefghijklmnopqrstuv in a message", Redacted + " in a message"},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: " + Redacted + " " + Redacted},
		{"curl -H \"Bearer abcdefghijklmnop\"", "curl -H \"Bearer " + Redacted + "\""},
		{`{"api_key": "zzzzzzzzzz"}`, `{"api_key": "` + Redacted + `"}`},
		{"x-api-key=abcd1234efgh", "x-api-key=" + Redacted},
		{"ls -la /tmp && go test ./...", "ls -la /tmp && go test ./..."},
		{"short pw", "short pw"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in, []string{key, "pw"}); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Whatever the caller logs (a message, a string, an error), the secret
// never reaches the writer.
func TestLoggerRedactsEveryValue(t *testing.T) {
	var out bytes.Buffer
	secret := "s3cr3t-token-0123456789"
	log := New(&out, []string{secret})
	log.Info("request to "+secret, "url", "https://h/?k="+secret, "err", errors.New("401 for "+secret))
	got := out.String()
	if strings.Contains(got, secret) || strings.Count(got, Redacted) < 3 {
		t.Errorf("secret leaked or not redacted:\n%s", got)
	}
}

func TestOpenWritesAPrivateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	log, c, err := Open(dir, nil, time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	log.Info("tool", "command", "ls", "ms", 3)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "debug-20261123-180000-*.log"))
	if len(files) != 1 {
		t.Fatalf("log files %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log file mode %v, %v; want 0600", fi.Mode(), err)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), "msg=tool command=ls ms=3") {
		t.Errorf("log:\n%s", data)
	}
	if _, _, err := Open(filepath.Join(files[0], "sub"), nil, time.Now()); err == nil {
		t.Error("a log directory under a file was accepted")
	}
}
