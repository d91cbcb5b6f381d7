package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/debuglog"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// debugLog is the process's debug log ($SYNAPSE_HOME/logs/debug-*.log) when
// SYNAPSE_DEBUG=1, opened on first use; nil otherwise. The provider
// credentials (and anything shaped like a key) are redacted from it. A log
// that cannot be opened is said once on stderr and left off.
func (a *App) debugLog() *slog.Logger {
	if !a.Config.Debug {
		return nil
	}
	a.debugOnce.Do(func() {
		var secrets []string
		for _, k := range append(append(sandbox.ProviderCredentials(), a.hiddenEnv()...), cloudSecretVars()...) {
			if v := a.Config.Getenv(k); v != "" {
				secrets = append(secrets, v)
			}
		}
		log, _, err := debuglog.Open(a.Config.LogsDir, secrets, time.Now())
		if err != nil {
			fmt.Fprintln(os.Stderr, "synapse: warning: SYNAPSE_DEBUG=1 but", err)
			return
		}
		// The file stays open for the process's life; the OS closes it.
		a.debug = log
		log.Info("start", "pid", os.Getpid(), "home", a.Config.Home)
	})
	return a.debug
}

// loggedProvider records each model request: model, size, time taken,
// outcome and usage.
type loggedProvider struct {
	llm.Provider
	log *slog.Logger
}

func (p loggedProvider) Stream(ctx context.Context, req llm.Request, on func(llm.Event)) (llm.Response, error) {
	start := time.Now()
	p.log.Debug("request", "provider", p.Name(), "model", req.Model, "messages", len(req.Messages), "tools", len(req.Tools))
	resp, err := p.Provider.Stream(ctx, req, on)
	if err != nil {
		p.log.Info("request failed", "provider", p.Name(), "model", req.Model, "ms", time.Since(start).Milliseconds(), "err", err)
		return resp, err
	}
	p.log.Debug("response", "provider", p.Name(), "model", req.Model, "ms", time.Since(start).Milliseconds(),
		"stop", resp.StopReason, "input", resp.Usage.InputTokens, "output", resp.Usage.OutputTokens,
		"cacheRead", resp.Usage.CacheReadTokens)
	return resp, err
}

// retryLogged makes policy note each retry's wait in log.
func retryLogged(policy llm.RetryPolicy, provider string, log *slog.Logger) *llm.RetryPolicy {
	sleep := policy.Sleep
	policy.Sleep = func(ctx context.Context, d time.Duration) error {
		log.Info("retry", "provider", provider, "wait", d.String())
		if sleep != nil {
			return sleep(ctx, d)
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return &policy
}

// logEvents wraps onEvent to record tool timings and sandbox decisions.
func logEvents(log *slog.Logger, onEvent func(agent.Event)) func(agent.Event) {
	if log == nil {
		return onEvent
	}
	return func(e agent.Event) {
		switch e.Kind {
		case agent.ToolEnd, agent.TaskToolEnd:
			attrs := []any{"layer", e.Route.Layer.String(), "name", e.Route.Name, "command", textutil.Clip(e.Command, 200),
				"ms", e.Duration.Milliseconds()}
			if e.TaskID != "" {
				attrs = append(attrs, "task", e.TaskID)
			}
			if r := e.Result; r != nil {
				if code, ok := r.Facts.Exit(); ok {
					attrs = append(attrs, "exit", code)
				}
				if r.Facts.FailureCategory != "" {
					attrs = append(attrs, "failure", r.Facts.FailureCategory)
				}
				if r.Facts.SandboxBlocked() {
					log.Info("sandbox blocked", "command", textutil.Clip(e.Command, 200), "resource", r.Facts.Resource,
						"reason", r.Facts.Reason, "approval", fmt.Sprint(r.Facts.Approval))
				}
			}
			log.Debug("tool", attrs...)
		case agent.TaskEnd:
			log.Debug("task", "id", e.TaskID, "type", e.TaskType, "ms", e.Duration.Milliseconds(), "tools", e.ToolCount, "err", e.Err)
		case agent.Error:
			log.Info("run failed", "err", e.Err)
		}
		if onEvent != nil {
			onEvent(e)
		}
	}
}
