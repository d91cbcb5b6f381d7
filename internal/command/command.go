// Package command holds the result every Bash-tool command produces, whatever
// layer ran it (native shell, agent shell, extension). It is a leaf package so
// that the shell, sandbox, agent shell and extension packages share one type
// without importing each other.
package command

import (
	"context"
	"os"
)

// Result is what one command produced.
type Result struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`

	// Blocked is set when the sandbox policy refused the command (before it ran,
	// or because the OS denied it). The Bash tool turns it into a sandbox_blocked result.
	Blocked         bool   `json:"blocked,omitempty"`
	BlockedReason   string `json:"blockedReason,omitempty"`
	BlockedResource string `json:"blockedResource,omitempty"`

	// TimedOut is set when the shell's per-command timeout stopped the
	// command (ExitCode is then 124), so the tool can say so by name.
	TimedOut bool `json:"timedOut,omitempty"`

	// Cwd is the shell's working directory after the command, when known.
	Cwd string `json:"cwd,omitempty"`

	// Images the command returned besides its text (MCP image content);
	// the text names each one for models that cannot be shown images.
	Images []Image `json:"images,omitempty"`

	// Change is what an edit or write did to a file, for the person's diff
	// view. It is never shown to the model (not serialised).
	Change *FileChange `json:"-"`

	// StdoutFile, when set, holds the command's whole stdout, which
	// outgrew memory (see WithSpill); Stdout then holds only its first and
	// last bytes, enough to classify a failure. The file is open, written
	// and positioned anywhere; whoever gets the Result closes it.
	StdoutFile *os.File `json:"-"`
}

// DropSpill closes and removes the file of a Result that will not be used.
func (r *Result) DropSpill() {
	if r.StdoutFile != nil {
		_ = r.StdoutFile.Close()
		_ = os.Remove(r.StdoutFile.Name())
		r.StdoutFile = nil
	}
}

// Image is one picture a command returned.
type Image struct {
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"`
}

// FileChange is a file's content before and after a command changed it.
type FileChange struct {
	Path     string
	Old, New string
	Created  bool // the file did not exist before
}

// MaxChangeBytes bounds the content a FileChange carries: a larger file is
// changed all the same, but shows no diff.
const MaxChangeBytes = 1 << 20

// Handler runs one command line of its layer. line is the whole command as the
// model wrote it (for example `read -n 2 a.txt` or `mcp:demo:echo --text hi`).
type Handler interface {
	Run(ctx context.Context, line string) Result
}

// Usage is a failed result carrying a usage message on stderr (exit 1).
func Usage(msg string) Result { return Result{Stderr: msg, ExitCode: 1} }

// Fail is a failed result with the given message on stderr (exit 1).
func Fail(msg string) Result { return Result{Stderr: msg, ExitCode: 1} }

// OK is a successful result with stdout.
func OK(stdout string) Result { return Result{Stdout: stdout} }

// Interrupted is the exit status of a command stopped by cancellation.
const Interrupted = 130

// outputKey carries an OutputFunc in a context.
type outputKey struct{}

// OutputFunc receives a running command's output as it arrives, for the
// person's live view; the Result still carries the whole output.
type OutputFunc func(chunk string)

// WithOutput returns ctx carrying fn: a layer that can stream a running
// command's output (the native shell) calls it with each piece.
func WithOutput(ctx context.Context, fn OutputFunc) context.Context {
	return context.WithValue(ctx, outputKey{}, fn)
}

// OutputOf is the OutputFunc ctx carries, or nil.
func OutputOf(ctx context.Context) OutputFunc {
	fn, _ := ctx.Value(outputKey{}).(OutputFunc)
	return fn
}

// spillKey carries a SpillFunc in a context.
type spillKey struct{}

// SpillFunc creates the file a layer writes a command's stdout to once it
// outgrows memory (the Bash tool's file for full outputs).
type SpillFunc func() (*os.File, error)

// WithSpill returns ctx carrying fn: a layer that keeps a command's output
// (the native shell) writes a large stdout to the file fn creates, keeping
// only its ends in memory, and returns the file in Result.StdoutFile.
func WithSpill(ctx context.Context, fn SpillFunc) context.Context {
	return context.WithValue(ctx, spillKey{}, fn)
}

// SpillOf is the SpillFunc ctx carries, or nil.
func SpillOf(ctx context.Context) SpillFunc {
	fn, _ := ctx.Value(spillKey{}).(SpillFunc)
	return fn
}
