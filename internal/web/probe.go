package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Sandbox probe statuses, recorded as the session's sandbox_status.
const (
	SandboxSupported   = "supported"   // the write boundary is enforced
	SandboxUnsupported = "unsupported" // it cannot be enforced here
	SandboxUnknown     = "unknown"     // the probe could not tell
)

// ProbeResult is what the sandbox probe found.
type ProbeResult struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// WrapFunc turns argv into a command line that runs argv with cwd as its
// working directory and file writes allowed only under the writable paths.
type WrapFunc func(writable []string, cwd string, argv []string) ([]string, error)

// probeTimeout bounds one probe; a probe that takes longer reports unknown.
const probeTimeout = 10 * time.Second

// probeScript writes inside $1 (must work) and inside $2 (must fail).
const probeScript = `echo ok > "$1/probe" || exit 11
if (echo leaked > "$2/probe") 2>/dev/null; then exit 12; fi
exit 0`

// ProbeSandbox checks for real that wrap confines writes: it runs a tiny
// script under wrap that must be able to write in one scratch directory and
// must fail to write in its sibling. scratch is a directory it may use.
func ProbeSandbox(ctx context.Context, wrap WrapFunc, scratch string) ProbeResult {
	if runtime.GOOS != "linux" {
		return ProbeResult{SandboxUnsupported, "the engine sandbox uses bubblewrap, which needs Linux; engines run unconfined on " + runtime.GOOS}
	}
	if wrap == nil {
		return ProbeResult{SandboxUnsupported, "no sandbox backend is configured; engines run unconfined"}
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return ProbeResult{SandboxUnknown, fmt.Sprintf("cannot create the probe directory: %v", err)}
	}
	dir, err := os.MkdirTemp(scratch, "probe-")
	if err != nil {
		return ProbeResult{SandboxUnknown, fmt.Sprintf("cannot create the probe directory: %v", err)}
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return ProbeResult{SandboxUnknown, fmt.Sprintf("cannot create the probe directory: %v", err)}
		}
	}
	argv, err := wrap([]string{in}, in, []string{"/bin/sh", "-c", probeScript, "probe", in, out})
	if err != nil {
		return ProbeResult{SandboxUnsupported, fmt.Sprintf("cannot build the sandbox command: %v", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	_, leakErr := os.Stat(filepath.Join(out, "probe"))
	_, insideErr := os.Stat(filepath.Join(in, "probe"))
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return ProbeResult{SandboxUnknown, fmt.Sprintf("the sandbox probe did not finish within %s", probeTimeout)}
	case errors.Is(runErr, exec.ErrNotFound) || errors.Is(runErr, os.ErrNotExist):
		return ProbeResult{SandboxUnsupported, fmt.Sprintf("%s is not installed: install bubblewrap (apt-get install bubblewrap) to confine engine writes", filepath.Base(argv[0]))}
	case leakErr == nil || (errors.As(runErr, &exitErr) && exitErr.ExitCode() == 12):
		return ProbeResult{SandboxUnsupported, "the sandbox did not block a write outside the session directory"}
	case runErr == nil && insideErr == nil:
		return ProbeResult{SandboxSupported, "bubblewrap confines writes to the session directory and agent_home"}
	case errors.As(runErr, &exitErr) && exitErr.ExitCode() == 11:
		return ProbeResult{SandboxUnsupported, "the session directory is not writable inside the sandbox"}
	case errors.As(runErr, &exitErr):
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = runErr.Error()
		}
		return ProbeResult{SandboxUnsupported, "the sandbox cannot start here: " + msg}
	default:
		return ProbeResult{SandboxUnknown, fmt.Sprintf("the sandbox probe gave no clear answer: %v", runErr)}
	}
}
