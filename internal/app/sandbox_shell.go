package app

import (
	"context"
	"errors"

	"github.com/synapse-agent/synapse/internal/sandbox"
)

// startShell starts the persistent shell for the sandbox manager.
// TODO(shell): replace with internal/shell.Start once that package lands.
func startShell(ctx context.Context, opts sandbox.SessionOptions) (sandbox.Session, error) {
	return nil, errors.New("the persistent shell is not available in this build yet")
}
