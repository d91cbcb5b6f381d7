package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `synapse serve` prints a tokenised URL on loopback, answers 401 without the
// token and 200 with it, and exits 0 when interrupted.
func TestServePrintsTokenURLAndRequiresIt(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "SYNAPSE_HOME": filepath.Join(dir, "syn")}
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data")},
			IO{In: strings.NewReader(""), Out: pw, Err: &stderr, Getenv: func(k string) string { return env[k] }})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no start-up line: %v (stderr: %s)", err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`^Synapse console: (http://127\.0\.0\.1:\d+)/ui/engines\?token=([0-9a-f]{32,})\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("start-up line = %q", line)
	}
	base, token := m[1], m[2]
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Like a browser: the token URL sets a cookie and redirects to the bare page.
	client := &http.Client{Timeout: 10 * time.Second, Jar: jar}
	resp, err := client.Get(base + "/api/engines")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: HTTP %d", resp.StatusCode)
	}
	resp, err = client.Get(base + "/ui/engines?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.RawQuery != "" || !strings.Contains(string(body), "/static/console.js") {
		t.Fatalf("with the token: HTTP %d %.200s", resp.StatusCode, body)
	}
	// Header sizes are bounded (the server sets MaxHeaderBytes to 64 KiB).
	req, _ := http.NewRequest(http.MethodGet, base+"/api/engines", nil)
	req.Header.Set("X-Pad", strings.Repeat("a", 200<<10))
	if resp, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 200 KiB header: HTTP %d, want 431", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d after interrupt (stderr: %s)", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after interrupt")
	}
}

func TestServeRejectsBadAuthSettings(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SYNAPSE_WEB_TOKEN": "short"}, "too short"},
		{map[string]string{"SYNAPSE_WEB_USER": "alice"}, "SYNAPSE_WEB_PASSWORD"},
		{map[string]string{"SYNAPSE_WEB_USER": "alice", "SYNAPSE_WEB_PASSWORD": "pw"}, "SYNAPSE_WEB_PASSWORD is too short (2 characters): use at least 12"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		tt.env["HOME"] = dir
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir},
			IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return tt.env[k] }})
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("env %v: exit %d, stderr %q", tt.env, code, errb.String())
		}
	}
}
