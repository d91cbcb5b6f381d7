//go:build !linux

package shell

import (
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// readPtable asks ps (macOS and the BSDs have no /proc). The session id is
// not portable, so sid stays 0 and callers fall back to ancestry.
func readPtable() (ptable, error) {
	out, err := exec.Command("ps", "-axo", "pid=,ppid=,pgid=").Output()
	if err != nil {
		return nil, err
	}
	t := ptable{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		pgid, err3 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil && err3 == nil {
			t[pid] = procInfo{pid: pid, ppid: ppid, pgid: pgid}
		}
	}
	return t, nil
}

// hostPid: without PID namespaces the reported pid is the real one.
func hostPid(root, nsPid int) int { return nsPid }

// innerPgid: without PID namespaces the host group is the shell's.
func innerPgid(pid, hostPgid int) int { return hostPgid }

// childPidfds: no pidfds here (OwnPIDNamespace is a Linux wrapper's).
func childPidfds(int) ([]int, bool) { return nil, false }

func waitPidfds([]int, time.Time) {}

func closePidfds([]int) {}
