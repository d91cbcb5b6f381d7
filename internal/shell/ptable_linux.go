package shell

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// readPtable scans /proc. Processes that vanish mid-scan are skipped.
func readPtable() (ptable, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	t := make(ptable, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseStat(pid, b); ok {
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
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp session ...
	if len(f) < 4 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	sid, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, sid: sid}, true
}

// hostPid maps the pid the shell reported ($$, which is namespace-local under
// `bwrap --unshare-pid`) to the pid we can signal: the process at or below
// root whose innermost namespace pid (last NSpid field) is nsPid.
func hostPid(root, nsPid int) int {
	t, err := readPtable()
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
