package app

import (
	"context"

	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/shell"
)

// startShell starts the persistent shell the sandbox manager runs commands
// in; opts.Argv is the exact (possibly bwrap-wrapped) program to spawn.
func startShell(ctx context.Context, opts sandbox.SessionOptions) (sandbox.Session, error) {
	s, err := shell.Start(ctx, shell.Options{Argv: opts.Argv, Dir: opts.Dir, Env: opts.Env, Timeout: opts.Timeout, OwnPIDNamespace: opts.OwnPIDNamespace})
	if err != nil {
		return nil, err
	}
	return s, nil
}

var _ sandbox.StartSession = startShell
