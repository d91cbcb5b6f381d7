package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Environment variables that configure access to the console.
const (
	EnvToken    = "SYNAPSE_WEB_TOKEN"    // fixed access token (default: random per start)
	EnvUser     = "SYNAPSE_WEB_USER"     // Basic Auth user name (with EnvPassword)
	EnvPassword = "SYNAPSE_WEB_PASSWORD" // Basic Auth password (with EnvUser)
	EnvHosts    = "SYNAPSE_WEB_HOSTS"    // more host names the console answers to, comma-separated
)

const (
	cookieName    = "synapse_console"
	minTokenBytes = 16
	// minPasswordChars: a Basic Auth password shorter than this is refused.
	minPasswordChars = 12
)

// Auth says who may use the console: anyone presenting Token (in the start-up
// URL's ?token=, then a cookie, or as a Bearer header), or, when User and
// Password are both set, Basic Auth with them.
type Auth struct {
	Token    string
	User     string
	Password string
	// Hosts are host names, besides IP addresses and localhost, that the
	// console answers to (a reverse proxy's name, say); see checkHost.
	Hosts []string
}

// NewToken returns a random URL-safe token.
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate access token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// AuthFromEnv builds the console's Auth: the token comes from SYNAPSE_WEB_TOKEN
// or is random; Basic Auth is enabled when SYNAPSE_WEB_USER and
// SYNAPSE_WEB_PASSWORD are both set.
func AuthFromEnv(getenv func(string) string) (Auth, error) {
	a := Auth{Token: getenv(EnvToken), User: getenv(EnvUser), Password: getenv(EnvPassword)}
	if a.Token == "" {
		t, err := NewToken()
		if err != nil {
			return Auth{}, err
		}
		a.Token = t
	} else if len(a.Token) < minTokenBytes {
		return Auth{}, fmt.Errorf("%s is too short (%d characters): use at least %d random characters or unset it for a random token", EnvToken, len(a.Token), minTokenBytes)
	}
	if (a.User == "") != (a.Password == "") {
		return Auth{}, errors.New("Basic Auth needs both " + EnvUser + " and " + EnvPassword + ": set both or neither")
	}
	if a.Password != "" && utf8.RuneCountInString(a.Password) < minPasswordChars {
		// Any local process (and any page the browser opens, were the
		// Origin check to fail) can try passwords as fast as it likes.
		return Auth{}, fmt.Errorf("%s is too short (%d characters): use at least %d, or unset both %s and %s to use the printed token URL", EnvPassword, utf8.RuneCountInString(a.Password), minPasswordChars, EnvUser, EnvPassword)
	}
	for _, h := range strings.Split(getenv(EnvHosts), ",") {
		if h = strings.TrimSpace(h); h != "" {
			a.Hosts = append(a.Hosts, h)
		}
	}
	return a, nil
}

func (a Auth) basicEnabled() bool { return a.User != "" && a.Password != "" }

func equalSecret(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// authenticated reports whether r carries a valid credential, and whether it
// came in the URL (so the caller can turn it into a cookie).
func (a Auth) authenticated(r *http.Request) (ok, fromURL bool) {
	// Every cookie of our name counts, not just the first: cookies ignore
	// ports, so a page on another port of this host can set one (with a
	// longer Path, so that it comes first) and would lock the user out.
	for _, c := range r.CookiesNamed(cookieName) {
		if equalSecret(c.Value, a.Token) {
			return true, false
		}
	}
	if h := r.Header.Get("Authorization"); h != "" {
		if tok, found := strings.CutPrefix(h, "Bearer "); found && equalSecret(tok, a.Token) {
			return true, false
		}
	}
	if a.basicEnabled() {
		if u, p, found := r.BasicAuth(); found {
			// Evaluate both comparisons so timing does not tell which one failed.
			uok := equalSecret(u, a.User)
			pok := equalSecret(p, a.Password)
			if uok && pok {
				return true, false
			}
		}
	}
	if t := r.URL.Query().Get("token"); t != "" && equalSecret(t, a.Token) {
		return true, true
	}
	return false, false
}

// requireAuth guards every route. An unauthenticated request gets a bare 401
// that says nothing about what exists behind it.
func (a Auth) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, fromURL := a.authenticated(r)
		if !ok {
			if a.basicEnabled() {
				w.Header().Set("WWW-Authenticate", `Basic realm="Synapse console", charset="UTF-8"`)
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			refuseAndClose(w)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, "401 unauthorized: open the URL printed by `synapse serve` (it carries the access token)")
			return
		}
		if fromURL {
			http.SetCookie(w, &http.Cookie{
				Name:     cookieName,
				Value:    a.Token,
				Path:     "/",
				HttpOnly: true,
				SameSite: http.SameSiteStrictMode,
			})
			if r.Method == http.MethodGet && !isWebSocket(r) {
				// Drop the token from the address bar and history.
				u := *r.URL
				q := u.Query()
				q.Del("token")
				u.RawQuery = q.Encode()
				// One leading slash: "//host/…" would be a redirect to host.
				if strings.HasPrefix(u.EscapedPath(), "//") {
					u.Path, u.RawPath = "/"+strings.TrimLeft(u.Path, "/"), ""
				}
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuseAndClose ends the connection after a refusal instead of reading
// what is left of the request body: net/http would otherwise read up to
// 256 KiB of it, with no deadline, both before answering and after, so a
// client without a credential could hold connections open by trickling
// bodies. The refused request's body is never needed.
func refuseAndClose(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// sameOrigin reports whether the request's Origin names this server. A
// missing Origin is accepted only when allowMissing (non-browser clients
// never send one; browsers always do on WebSocket and cross-site POSTs).
func sameOrigin(r *http.Request, allowMissing bool) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		if allowMissing {
			return nil
		}
		return errors.New("missing Origin header")
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("malformed Origin %q", origin)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("origin %q is not a web page of this server", origin)
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("origin %q does not match this server (%s)", origin, r.Host)
	}
	return nil
}

// checkHost guards against DNS rebinding: a page of another site whose name
// the attacker re-points at 127.0.0.1 reaches this server as a same-origin
// page, with its own name in Host and Origin, so the Origin check passes and
// only the credential would stand in its way (a weak Basic Auth password
// could be guessed from the victim's browser). Such a page always names the
// server by a DNS name, so the console answers only to IP addresses,
// localhost (and *.localhost, which browsers resolve to loopback themselves)
// and the names the user listed in SYNAPSE_WEB_HOSTS. It also keeps odd
// Host values out of the Content-Security-Policy header, which repeats Host.
func (a Auth) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.hostAllowed(r.Host); err != nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Cache-Control", "no-store")
			refuseAndClose(w)
			w.WriteHeader(http.StatusMisdirectedRequest)
			fmt.Fprintf(w, "421 misdirected request: %v\n", err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a Auth) hostAllowed(hostport string) error {
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if _, perr := strconv.ParseUint(port, 10, 16); perr != nil && port != "" {
			return fmt.Errorf("malformed Host %q", hostport)
		}
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case host == "":
		return errors.New("the request names no host")
	case net.ParseIP(host) != nil:
		return nil
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return nil
	}
	for _, h := range a.Hosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			return nil
		}
	}
	return fmt.Errorf("this console answers only to IP addresses and localhost, not to %q: open the URL printed by `synapse serve`, or add the name to %s if you serve the console under it", host, EnvHosts)
}
