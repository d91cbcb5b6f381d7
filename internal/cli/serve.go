package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/web"
)

func newServeCmd(stdio IO) *cobra.Command {
	var (
		addr           string
		dataDir        string
		requireSandbox bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Start the web console (/ui/engines: agent CLIs in an embedded terminal)",
		Long: `Start the web console. Its /ui/engines page starts one agent CLI at a time
(codex, gemini or iflow, whichever are on PATH) in a terminal embedded in the page,
in a fresh directory under <data-dir>/ui_shell_sessions, with its home in
<data-dir>/agent_home, confined by bubblewrap to write only there.

Every request needs the access token from the printed URL (a cookie after the first
visit), or Basic Auth when SYNAPSE_WEB_USER and SYNAPSE_WEB_PASSWORD (12 characters or
more) are set.
SYNAPSE_WEB_TOKEN fixes the token. Requests must name the console by an IP address or
localhost (DNS rebinding); SYNAPSE_WEB_HOSTS adds host names, comma-separated.
Sessions end after UI_SHELL_HARD_TTL_SECONDS
(default 1800) or UI_SHELL_IDLE_TTL_SECONDS without input (default 900).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), stdio, addr, dataDir, requireSandbox)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8787", "address to listen on (keep it on loopback unless you know why)")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "directory for session directories and agent_home (default $SYNAPSE_HOME/data)")
	cmd.Flags().BoolVar(&requireSandbox, "require-sandbox", false, "refuse to start engines when the sandbox probe is not supported")
	return cmd
}

func runServe(ctx context.Context, stdio IO, addr, dataDir string, requireSandbox bool) error {
	a, err := app.New(stdio.Getenv)
	if err != nil {
		return exitCode(1, err)
	}
	if dataDir == "" {
		dataDir = filepath.Join(a.Config.Home, "data")
	}
	auth, err := web.AuthFromEnv(stdio.Getenv)
	if err != nil {
		return exitCode(2, err)
	}
	settings, err := a.Settings()
	if err != nil {
		return exitCode(1, err)
	}
	env := os.Environ()
	srv, err := web.New(web.Options{
		DataDir:        dataDir,
		Env:            env,
		EngineEnv:      settings.ConsoleEnv,
		Auth:           auth,
		Limits:         web.LimitsFromEnv(stdio.Getenv),
		Wrap:           web.SandboxWrap(a.Config.UserHome, env, agentSecrets(a.Config.Home)...),
		RequireSandbox: requireSandbox,
		Logger:         slog.New(slog.NewTextHandler(stdio.Err, nil)),
	})
	if err != nil {
		return exitCode(1, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return exitCode(1, fmt.Errorf("cannot listen on %s: %w: pick another --addr", addr, err))
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	} else if !ip.IsLoopback() {
		fmt.Fprintf(stdio.Err, "warning: listening on %s, which is reachable from other machines; the token is the only guard\n", ln.Addr())
	}
	fmt.Fprintf(stdio.Out, "Synapse console: http://%s/ui/engines?token=%s\n", net.JoinHostPort(host, port), auth.Token)
	if auth.User != "" {
		fmt.Fprintf(stdio.Out, "Basic Auth is also accepted for user %q.\n", auth.User)
	}
	fmt.Fprintf(stdio.Out, "Data directory: %s\n", dataDir)
	if !srv.AssetsPresent() {
		fmt.Fprintln(stdio.Err, "warning: xterm.js is missing from this build, so the page cannot show terminals: run `make web-assets` and rebuild")
	}

	// No read or write timeout: terminals are long-lived websockets. Idle
	// keep-alive connections and header sizes are bounded instead.
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = srv.Close(sctx)
	_ = hs.Shutdown(sctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitCode(1, fmt.Errorf("web console stopped: %w", err))
	}
	return nil
}

// agentSecrets are Synapse's own credential files, hidden from the engines.
func agentSecrets(home string) []string {
	var out []string
	for _, rel := range sandbox.AgentSecrets() {
		out = append(out, filepath.Join(home, rel))
	}
	return out
}
