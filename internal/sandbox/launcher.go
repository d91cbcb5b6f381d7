package sandbox

import (
	"fmt"
	"os"
)

// LauncherCommand is the hidden first argument that turns the synapse
// binary into the Landlock launcher: `synapse __landlock-exec SPEC -- ARGV`.
// Landlock and seccomp restrict the calling thread and what it executes, so
// the sandboxed shell is started through this: the launcher restricts
// itself, then execve's ARGV. Main programs check for it before anything
// else (cli.Main; the sandbox tests' TestMain).
const LauncherCommand = "__landlock-exec"

// landlockSpec is what the launcher enforces, computed on the host by
// planLandlock and passed as one JSON argument.
type landlockSpec struct {
	Rules []landlockRule `json:"rules"`
	// Network keeps TCP/UDP (and AF_INET sockets) allowed.
	Network bool `json:"network,omitempty"`
	// TTY keeps the controlling terminal (web engines on a PTY they own);
	// otherwise the launcher starts a new session.
	TTY bool `json:"tty,omitempty"`
	// Setenv adds KEY=VALUE pairs (TMPDIR) to the program's environment.
	Setenv []string `json:"setenv,omitempty"`
	// Dir is the working directory to start in ("" keeps the current one).
	Dir string `json:"dir,omitempty"`
}

// landlockRule grants one access kind on a file or directory hierarchy.
type landlockRule struct {
	Path string `json:"p"`
	Kind string `json:"k"` // accessRead, accessWrite or accessDev
}

// Rule kinds.
const (
	accessRead  = "r"   // read, list and execute
	accessWrite = "rw"  // everything but ioctl on devices and connecting to foreign sockets
	accessDev   = "dev" // read and write a device file (/dev/null), with terminal ioctls
)

// Launch is the launcher's main: args are SPEC -- ARGV (or --sweep: the
// repository guard's background pass, handoff.go). It restricts the
// process and execve's ARGV, so it returns only on failure (exit 126, as a
// shell does for a command it cannot run), after saying why on stderr.
func Launch(args []string) int {
	if len(args) > 0 && args[0] == sweepArg {
		return sweepMain(args[1:])
	}
	err := launch(args) // returns only on failure: it execs
	fmt.Fprintf(os.Stderr, "synapse sandbox (landlock): %v; the command was not run\n", err)
	return 126
}

// Landlock ABI versions that brought a right (see the kernel's landlock.h;
// the masks are in launcher_linux.go).
const (
	llMinTrunc  = 3 // ABI that handles truncate(2)
	llMinNet    = 4 // ABI that handles TCP bind/connect
	llMinIoctl  = 5
	llMinScope  = 6 // signals and abstract unix sockets scoped to the domain
	llMinUnix   = 9 // connect(2) to pathname unix sockets handled
	llMinNetUDP = 10
)
