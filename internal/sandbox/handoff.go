package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

// sweepArg, after LauncherCommand, makes the launcher the background pass
// of the repository guard's sweep: `synapse __landlock-exec --sweep
// NOTICES`, the handoff as JSON on stdin. Every binary that can be the
// launcher (synapse, the tests' binaries) handles it, in Launch.
const sweepArg = "--sweep"

// maxHandoff bounds what the pass reads of its stdin.
const maxHandoff = 64 << 20

// noticesName is the file, in the agent home's logs, where the background
// pass writes what it disabled; the next manager shows it and removes it.
var noticesName = filepath.Join("logs", "repoguard-notices.log")

// handOff starts the background pass of the sweep that the end of a
// session leaves when the tree has folders no watch covered (seconds in a
// tree of 100 000 folders, which nobody should wait for at every exit): a
// process of its own (its own session, no terminal, an empty environment,
// working directory /), given the watch's judgement state on a pipe that
// is written whole before handOff returns, so it outlives the caller.
// The pass inherits held (closed here), the session's inotify descriptor,
// on heldFD: the kernel's teardown of two thousand watches is then the
// pass's, as it starts, and not this process's at its exit.
func handOff(launcher, notices string, h repoguard.Handoff, held *os.File) error {
	if held != nil {
		defer held.Close()
	}
	data, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode the sweep's state: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start the background sweep: %w", err)
	}
	defer w.Close()
	cmd := exec.Command(launcher, LauncherCommand, sweepArg, notices)
	cmd.Stdin, cmd.Dir, cmd.Env = r, "/", []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if held != nil {
		cmd.ExtraFiles = []*os.File{held}
	}
	err = cmd.Start()
	r.Close()
	if err != nil {
		return fmt.Errorf("start the background sweep: %w", err)
	}
	idlePriority(cmd.Process.Pid)
	go func() { _ = cmd.Wait() }() // reaped if this process lives on
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("hand the sweep over: %w", err)
	}
	return nil
}

// heldFD is where the pass inherits the session's inotify descriptor
// (handOff's only extra file).
const heldFD = 3

// sweepMain is the background pass: it reads the handoff, runs the whole
// pass, and appends what it disabled to the notices file (if any).
func sweepMain(args []string) int {
	// The session's watches go first, not after the whole pass: a
	// session's watches outlive it by this process's start, not by
	// seconds (sessions ended back to back would each hold two thousand
	// of the user's inotify watches while their passes ran).
	closeIfInotify(heldFD)
	data, err := io.ReadAll(io.LimitReader(os.Stdin, maxHandoff))
	var h repoguard.Handoff
	if err == nil {
		err = json.Unmarshal(data, &h)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "synapse sandbox: the background sweep got no state: %v\n", err)
		return 1
	}
	lines := repoguard.Finish(h)
	if len(lines) == 0 || len(args) == 0 || args[0] == "" {
		return 0
	}
	if err := appendNotices(args[0], lines); err != nil {
		fmt.Fprintf(os.Stderr, "synapse sandbox: %v\n", err)
		return 1
	}
	return 0
}

// closeIfInotify closes fd when it is an inotify descriptor.
func closeIfInotify(fd int) {
	if l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil && l == "anon_inode:inotify" {
		_ = syscall.Close(fd)
	}
}

// appendNotices adds lines to the notices file (never through a link).
func appendNotices(path string, lines []string) error {
	// The agent home is made if need be (a machine that only runs `synapse
	// exec` may have none yet): a notice is not to be lost.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("record what the background sweep disabled: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("record what the background sweep disabled: %w", err)
	}
	stamp := time.Now().Format(time.DateTime)
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s\t%s\n", stamp, strings.ReplaceAll(l, "\n", " "))
	}
	_, err = f.WriteString(b.String())
	return errors.Join(err, f.Close())
}

// takeNotices returns what background passes disabled since the last
// manager read them, as warnings, and removes the file.
func takeNotices(path string) []string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		stamp, l, ok := strings.Cut(strings.TrimSpace(sc.Text()), "\t")
		if ok && l != "" {
			out = append(out, "after a session that ended at "+stamp+", the sandbox's last check "+l)
		}
	}
	_ = os.Remove(path)
	return out
}
