package shell

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// readPtable scans /proc. Processes that vanish mid-scan are skipped.
func readPtable() (ptable, error) { return readPtableFrom(0) }

// readPtableFrom scans the processes whose pid is at least first. A stat
// file is read with three system calls into one buffer (os.ReadFile makes
// six: a stat, the poller's registration, a read to see the end), and
// parsed without allocating: every shell start scans, and a desktop runs
// hundreds of processes.
func readPtableFrom(first int) (ptable, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	t := ptable{}
	var buf [1024]byte // a stat line is ~300 bytes: its command name is at most 15
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid < first {
			continue
		}
		fd, err := unix.Open("/proc/"+n+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		k, err := unix.Read(fd, buf[:])
		_ = unix.Close(fd)
		if err != nil || k <= 0 {
			continue
		}
		if p, ok := parseStat(pid, buf[:k]); ok {
			t[pid] = p
		}
	}
	return t, nil
}

// parseStat reads ppid, pgrp and session from /proc/<pid>/stat. The command
// name is in parentheses and may itself contain spaces and parentheses, so
// fields are counted from the last ')'.
func parseStat(pid int, b []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	rest := b[i+1:]
	var f [4]int // state (unused), ppid, pgrp, session
	for k := range f {
		rest = bytes.TrimLeft(rest, " \n")
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		field := rest[:end]
		rest = rest[end:]
		if len(field) == 0 {
			return procInfo{}, false
		}
		if k > 0 {
			n, err := strconv.Atoi(string(field))
			if err != nil {
				return procInfo{}, false
			}
			f[k] = n
		}
	}
	return procInfo{pid: pid, ppid: f[1], pgid: f[2], sid: f[3]}, true
}

// hostPid maps the pid the shell reported ($$, which is namespace-local under
// `bwrap --unshare-pid`) to the pid we can signal: the process at or below
// root whose innermost namespace pid (last NSpid field) is nsPid.
func hostPid(root, nsPid int) int {
	// The sandbox's processes were made after root, so their pids are
	// above it (the few since it started, not the whole host's), unless
	// pids wrapped: then the whole table is read.
	if pid := hostPidIn(root, nsPid, root); pid != 0 {
		return pid
	}
	return hostPidIn(root, nsPid, 0)
}

// hostPidIn is hostPid among the pids from first on; 0 if not found.
func hostPidIn(root, nsPid, first int) int {
	t, err := readPtableFrom(first)
	if err != nil {
		return nsPid
	}
	cands := t.descendants(root)
	cands[root] = true
	for pid := range cands {
		if pid == nsPid {
			return pid // no namespace in between
		}
	}
	for pid := range cands {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			rest, ok := strings.CutPrefix(line, "NSpid:")
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			if len(f) > 1 && f[len(f)-1] == strconv.Itoa(nsPid) {
				return pid
			}
		}
	}
	return 0
}

// innerPgid is pid's process group as the shell sees it (innermost PID
// namespace), to compare with the job ids `jobs -p` printed.
func innerPgid(pid, hostPgid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return hostPgid
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "NSpgid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
					return n
				}
			}
		}
	}
	return hostPgid
}

// childPidfds returns pidfds of root's children; ok is false when the
// kernel does not list them (no CONFIG_PROC_CHILDREN) or the list changed
// while they were opened. Under bubblewrap
// the one child is the first process of the PID namespace, which ends only
// after every other process in it has: waiting for it tells that none of
// the session runs any more. The caller closes the descriptors.
func childPidfds(root int) (fds []int, ok bool) {
	path := "/proc/" + strconv.Itoa(root) + "/task/" + strconv.Itoa(root) + "/children"
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	pids := strings.Fields(string(b))
	for _, f := range pids {
		if pid, err := strconv.Atoi(f); err == nil {
			if fd, err := unix.PidfdOpen(pid, 0); err == nil {
				fds = append(fds, fd)
			}
		}
	}
	// A child that ended between the read and its pidfd_open may have left
	// its pid to another process: the pidfds are the children's only if the
	// list is the same after them.
	if b2, err := os.ReadFile(path); err != nil || string(b2) != string(b) {
		closePidfds(fds)
		return nil, false
	}
	return fds, true
}

// waitPidfds waits, until the deadline, for the processes of fds to end,
// and closes fds.
func waitPidfds(fds []int, deadline time.Time) {
	for _, fd := range fds {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			ms := int(time.Until(deadline).Milliseconds())
			if ms <= 0 {
				break
			}
			if n, err := unix.Poll(pfd, ms); err != unix.EINTR && (err != nil || n > 0) {
				break
			}
		}
	}
	closePidfds(fds)
}

func closePidfds(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}
