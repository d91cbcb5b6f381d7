// Package debuglog is the debug log switched on with SYNAPSE_DEBUG=1: one
// file per process in $SYNAPSE_HOME/logs, written with log/slog as text
// lines (model requests and retries, tool timings, sandbox decisions), every
// value passed through Redact first so that no secret reaches the file. It
// is a leaf: it imports nothing of ours.
package debuglog

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Redacted replaces a secret in the log.
const Redacted = "[redacted]"

// minSecret is the shortest value treated as a secret (shorter ones would
// redact ordinary words).
const minSecret = 8

// secretPatterns catch credentials we were not told about: API keys of the
// usual shapes and authorization headers. Compiled on first use: only a
// debug log needs them.
var secretPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`),
		regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}`),
		regexp.MustCompile(`(?i)\b(x-api-key|api[_-]?key|authorization|token|password|secret)(["']?\s*[:=]\s*["']?)[^\s"',;]{4,}`),
	}
})

// Redact returns s with each of secrets (values of at least 8 characters)
// and anything shaped like a key or an authorization header replaced by
// Redacted.
func Redact(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= minSecret {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	for i, re := range secretPatterns() {
		if i == 2 {
			s = re.ReplaceAllString(s, "${1}${2}"+Redacted)
			continue
		}
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if i == 1 {
				if f := strings.Fields(m); len(f) == 2 {
					return f[0] + " " + Redacted
				}
			}
			return Redacted
		})
	}
	return s
}

// Open creates this process's log file in dir (made private if missing)
// and returns a logger writing to it, with every string, error and
// stringer value redacted of secrets. Close the closer at exit.
func Open(dir string, secrets []string, now time.Time) (*slog.Logger, io.Closer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("debug log: cannot create %s: %w", dir, err)
	}
	name := filepath.Join(dir, fmt.Sprintf("debug-%s-%d.log", now.UTC().Format("20060102-150405"), os.Getpid()))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("debug log: %w", err)
	}
	return New(f, secrets), f, nil
}

// New returns a logger writing redacted text lines to w.
func New(w io.Writer, secrets []string) *slog.Logger {
	secrets = append([]string(nil), secrets...)
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Value.Kind() {
			case slog.KindString:
				return slog.String(a.Key, Redact(a.Value.String(), secrets))
			case slog.KindAny:
				switch v := a.Value.Any().(type) {
				case error:
					return slog.String(a.Key, Redact(v.Error(), secrets))
				case fmt.Stringer:
					return slog.String(a.Key, Redact(v.String(), secrets))
				}
			}
			return a
		}})
	return slog.New(h)
}
