package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Every page, API call, asset and WebSocket needs a credential; without one
// the answer is a bare 401 that reveals nothing about what is behind it.
func TestUnauthenticatedRequestsGet401(t *testing.T) {
	e := newTestEnv(t, func(o *Options) { o.Auth.User, o.Auth.Password = "alice", "s3cret-password" })
	st := e.start("codex-tui")
	defer e.stop(st.ID)
	routes := []struct{ method, path string }{
		{"GET", "/"},
		{"GET", "/ui/engines"},
		{"GET", "/static/console.js"},
		{"GET", "/static/vendor/xterm.js"},
		{"GET", "/api/engines"},
		{"GET", "/api/sessions/current"},
		{"POST", "/api/sessions"},
		{"POST", "/api/sessions/" + st.ID + "/stop"},
		{"GET", "/api/sessions/" + st.ID + "/terminal"},
		{"GET", "/does-not-exist"},
	}
	creds := []struct {
		name string
		set  func(*http.Request)
	}{
		{"none", func(*http.Request) {}},
		{"wrong bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong-token-0123456789") }},
		{"wrong cookie", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: cookieName, Value: "nope"}) }},
		{"wrong query token", func(r *http.Request) { r.URL.RawQuery = "token=nope" }},
		{"wrong basic password", func(r *http.Request) { r.SetBasicAuth("alice", "wrong") }},
		{"basic user with token as password", func(r *http.Request) { r.SetBasicAuth("bob", testToken) }},
	}
	for _, rt := range routes {
		for _, c := range creds {
			req, _ := http.NewRequest(rt.method, e.ts.URL+rt.path, strings.NewReader(`{"engine":"gemini-tui"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", e.ts.URL)
			c.set(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with %s: HTTP %d, want 401", rt.method, rt.path, c.name, resp.StatusCode)
			}
			for _, leak := range []string{st.ID, "codex", "gemini", "session_dir", "sandbox"} {
				if strings.Contains(string(body), leak) {
					t.Errorf("%s %s with %s: 401 body leaks %q: %s", rt.method, rt.path, c.name, leak, body)
				}
			}
			if resp.Header.Get("Set-Cookie") != "" {
				t.Errorf("%s %s with %s: sets a cookie", rt.method, rt.path, c.name)
			}
		}
	}
	// The unauthenticated stop did nothing.
	if s := e.srv.mgr.Get(st.ID).State(); s.Status != StatusRunning {
		t.Fatalf("session after unauthenticated requests: %+v", s)
	}
}

// The start-up URL's token becomes a cookie and leaves the address bar;
// Bearer and Basic Auth work too.
func TestAuthenticationMethods(t *testing.T) {
	e := newTestEnv(t, func(o *Options) { o.Auth.User, o.Auth.Password = "alice", "s3cret-password" })
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := noRedirect.Get(e.ts.URL + "/ui/engines?token=" + testToken)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/engines" {
		t.Fatalf("token URL: HTTP %d Location %q, want 303 to /ui/engines", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie = %+v, want HttpOnly SameSite=Strict", cookie)
	}
	tests := []struct {
		name string
		set  func(*http.Request)
	}{
		{"cookie", func(r *http.Request) { r.AddCookie(cookie) }},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken) }},
		{"basic", func(r *http.Request) { r.SetBasicAuth("alice", "s3cret-password") }},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("GET", e.ts.URL+"/api/engines", nil)
		tt.set(req)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: HTTP %d", tt.name, resp.StatusCode)
		}
	}
	// Basic Auth is announced only when it is configured.
	resp, _ = http.Get(e.ts.URL + "/api/engines")
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
	}
	plain := newTestEnv(t)
	resp, _ = http.Get(plain.ts.URL + "/api/engines")
	resp.Body.Close()
	if resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("WWW-Authenticate without Basic Auth configured: %q", resp.Header.Get("WWW-Authenticate"))
	}
}

// WebSocket upgrades must come from this server's own page.
func TestWebSocketOriginCheck(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("codex-tui")
	defer e.stop(st.ID)
	tests := []struct {
		origin string
		ok     bool
	}{
		{e.ts.URL, true},
		{"", false},
		{"http://evil.example", false},
		{"http://localhost.evil.example", false},
		{"null", false},
		{"file://" + strings.TrimPrefix(e.ts.URL, "http://"), false},
		{strings.Replace(e.ts.URL, "127.0.0.1", "localhost", 1), false},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set("Authorization", "Bearer "+testToken)
		if tt.origin != "" {
			h.Set("Origin", tt.origin)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, resp, err := websocket.Dial(ctx, e.wsURL(st.ID), &websocket.DialOptions{HTTPHeader: h})
		cancel()
		if tt.ok {
			if err != nil {
				t.Errorf("origin %q: %v", tt.origin, err)
				continue
			}
			_ = conn.CloseNow()
			continue
		}
		if err == nil {
			_ = conn.CloseNow()
			t.Errorf("origin %q: upgrade accepted", tt.origin)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: %v, want 403", tt.origin, err)
		}
	}
	// Cross-site POSTs are refused too, even with a valid credential.
	req, _ := http.NewRequest("POST", e.ts.URL+"/api/sessions/"+st.ID+"/stop", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site stop: HTTP %d", resp.StatusCode)
	}
	// And a form-encoded POST (what a plain HTML form can send) is not accepted.
	req, _ = http.NewRequest("POST", e.ts.URL+"/api/sessions/"+st.ID+"/stop", strings.NewReader("a=b"))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("form stop: HTTP %d", resp.StatusCode)
	}
	if s := e.srv.mgr.Get(st.ID).State(); s.Status != StatusRunning {
		t.Fatalf("refused requests stopped the session: %+v", s)
	}
}

func TestAuthFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		basic   bool
	}{
		{"random token", map[string]string{}, "", false},
		{"fixed token", map[string]string{EnvToken: "0123456789abcdef0123"}, "", false},
		{"short token", map[string]string{EnvToken: "short"}, "too short", false},
		{"basic", map[string]string{EnvUser: "u", EnvPassword: "correct-horse-battery"}, "", true},
		{"short password", map[string]string{EnvUser: "u", EnvPassword: "hunter2"}, "too short (7 characters)", false},
		{"half basic", map[string]string{EnvUser: "u"}, "both", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := AuthFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Token) < minTokenBytes || a.basicEnabled() != tt.basic {
				t.Fatalf("auth = %+v", a)
			}
			if v := tt.env[EnvToken]; v != "" && a.Token != v {
				t.Fatalf("token = %q, want %q", a.Token, v)
			}
		})
	}
	a1, _ := AuthFromEnv(func(string) string { return "" })
	a2, _ := AuthFromEnv(func(string) string { return "" })
	if a1.Token == a2.Token {
		t.Fatal("two random tokens are equal")
	}
	a, err := AuthFromEnv(func(k string) string {
		if k == EnvHosts {
			return " console.example, ,proxy.example "
		}
		return ""
	})
	if err != nil || strings.Join(a.Hosts, "|") != "console.example|proxy.example" {
		t.Fatalf("%s: hosts = %q, %v", EnvHosts, a.Hosts, err)
	}
}

// A DNS-rebinding page (another site's name re-pointed at 127.0.0.1) is
// same-origin with itself: its Host and Origin agree. Even holding a
// credential it must get nowhere, and odd Host values must not reach the
// Content-Security-Policy header, which repeats Host.
func TestHostCheckStopsDNSRebinding(t *testing.T) {
	e := newTestEnv(t, func(o *Options) { o.Auth.Hosts = []string{"console.example"} })
	st := e.start("codex-tui")
	defer e.stop(st.ID)
	port := e.ts.URL[strings.LastIndex(e.ts.URL, ":")+1:]
	tests := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:" + port, true},
		{"localhost:" + port, true},
		{"LOCALHOST:" + port, true},
		{"app.localhost:" + port, true},
		{"[::1]:" + port, true},
		{"console.example:" + port, true}, // listed in Hosts
		{"127.0.0.1", true},
		{"evil.example:" + port, false},
		{"evil.example", false},
		{"127.0.0.1.evil.example:" + port, false},
		{"localhost.evil.example:" + port, false},
		{"console.example.evil:" + port, false},
		{"127.0.0.1:" + port + ";script-src-elem", false},
		{"127.0.0.1:notaport", false},
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range tests {
		origin := "http://" + tt.host
		requests := []struct {
			name string
			req  func() *http.Request
		}{
			{"page", func() *http.Request { r, _ := http.NewRequest("GET", e.ts.URL+"/ui/engines", nil); return r }},
			{"api", func() *http.Request { r, _ := http.NewRequest("GET", e.ts.URL+"/api/engines", nil); return r }},
			{"start", func() *http.Request {
				r, _ := http.NewRequest("POST", e.ts.URL+"/api/sessions", strings.NewReader(`{"engine":"nope"}`))
				r.Header.Set("Content-Type", "application/json")
				return r
			}},
			{"stop", func() *http.Request {
				r, _ := http.NewRequest("POST", e.ts.URL+"/api/sessions/"+st.ID+"/stop", strings.NewReader(`{}`))
				r.Header.Set("Content-Type", "application/json")
				return r
			}},
		}
		for _, rq := range requests {
			if tt.ok && rq.name == "stop" {
				continue // it would work
			}
			req := rq.req()
			req.Host = tt.host
			req.Header.Set("Origin", origin)
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refused := resp.StatusCode == http.StatusMisdirectedRequest
			if refused == tt.ok {
				t.Errorf("Host %q, %s: HTTP %d %s", tt.host, rq.name, resp.StatusCode, body)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); strings.Contains(csp, "script-src-elem") {
				t.Errorf("Host %q, %s: Host reaches the CSP: %s", tt.host, rq.name, csp)
			}
			if refused && !strings.Contains(string(body), EnvHosts) && !strings.Contains(string(body), "malformed Host") {
				t.Errorf("Host %q: the refusal does not say how to allow a name: %s", tt.host, body)
			}
		}
		if tt.ok {
			continue
		}
		// The terminal, too.
		h := http.Header{}
		h.Set("Authorization", "Bearer "+testToken)
		h.Set("Origin", origin)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, resp, err := websocket.Dial(ctx, e.wsURL(st.ID), &websocket.DialOptions{HTTPHeader: h, Host: tt.host})
		cancel()
		if err == nil {
			_ = conn.CloseNow()
			t.Errorf("Host %q: terminal upgrade accepted", tt.host)
		} else if resp == nil || resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: terminal upgrade: %v, want 421", tt.host, err)
		}
	}
	if s := e.srv.mgr.Get(st.ID).State(); s.Status != StatusRunning {
		t.Fatalf("a refused request stopped the session: %+v", s)
	}
}

// A client without a credential cannot hold a connection open: it gets its
// 401 at once even while it trickles a request body the server will never
// read (without this net/http first reads up to 256 KiB of that body to keep
// the connection alive, with no deadline), and the connection closes.
func TestUnauthenticatedSlowBodyGetsAnswerAndClose(t *testing.T) {
	e := newTestEnv(t)
	addr := strings.TrimPrefix(e.ts.URL, "http://")
	tests := []struct{ path, host, want string }{
		{"/api/sessions", addr, "HTTP/1.1 401"},
		{"/api/sessions/x/stop", addr, "HTTP/1.1 401"},
		{"/ui/engines", addr, "HTTP/1.1 401"},
		{"/api/sessions", "evil.example", "HTTP/1.1 421"},
	}
	for _, tt := range tests {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"engine\"", tt.path, tt.host)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(conn) // until the server closes
		conn.Close()
		if !strings.HasPrefix(string(got), tt.want) {
			t.Errorf("POST %s (Host %s) with a slow body: got %q (%v), want %s", tt.path, tt.host, got, err, tt.want)
		} else if err != nil {
			t.Errorf("POST %s (Host %s) with a slow body: the connection stayed open after the answer: %v", tt.path, tt.host, err)
		}
	}
}

// Cookies do not keep to a port: a page served from any other port of the
// same host (another local user's server, a dev server an engine started)
// can set a cookie of the console's name, with a longer Path so that the
// browser sends it first. The console must still find its own among them
// rather than lock its user out.
func TestTossedCookieDoesNotLockOut(t *testing.T) {
	e := newTestEnv(t)
	tests := []struct {
		name    string
		cookies []string
		want    int
	}{
		{"tossed first", []string{"tossed-by-another-port", testToken}, http.StatusOK},
		{"tossed last", []string{testToken, "tossed-by-another-port"}, http.StatusOK},
		{"empty tossed first", []string{"", testToken}, http.StatusOK},
		{"only tossed", []string{"tossed-1", "tossed-2"}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("GET", e.ts.URL+"/api/engines", nil)
		for _, v := range tt.cookies {
			req.AddCookie(&http.Cookie{Name: cookieName, Value: v})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s (Cookie: %s): HTTP %d, want %d", tt.name, req.Header.Get("Cookie"), resp.StatusCode, tt.want)
		}
	}
}

// The redirect that drops the start-up token from the address bar goes to a
// path of this server, whatever the path looks like: a path starting with
// two slashes would otherwise become a protocol-relative Location, a
// redirect to another host.
func TestTokenRedirectStaysOnThisServer(t *testing.T) {
	e := newTestEnv(t)
	addr := strings.TrimPrefix(e.ts.URL, "http://")
	tests := []struct{ path, want string }{
		{"/ui/engines?", "/ui/engines"},
		{"/ui/engines?x=1&", "/ui/engines?x=1"},
		{"//evil.example/x?", "/evil.example/x"},
		{"//evil.example?", "/evil.example"},
		{"///evil.example?", "/evil.example"},
		{"/%2F%2Fevil.example?", "/%2F%2Fevil.example"},
	}
	for _, tt := range tests {
		// A raw request line: clients would read "//host" as an authority.
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %stoken=%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", tt.path, testToken, addr)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		conn.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || loc != tt.want {
			t.Errorf("GET %stoken=…: HTTP %d Location %q, want 303 to %q", tt.path, resp.StatusCode, loc, tt.want)
		}
	}
}
