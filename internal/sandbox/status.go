package sandbox

import (
	"fmt"
	"strings"
)

// Status says what is enforced on this machine and why.
type Status struct {
	Enabled  bool   `json:"enabled"` // commands run under the OS sandbox
	Provider string `json:"provider,omitempty"`
	Platform string `json:"platform"` // bubblewrap, landlock, sandbox-exec or none
	// Unavailable: the sandbox is on but no backend can run, so every
	// command is refused (Reason says why and how to fix it).
	Unavailable bool `json:"unavailable,omitempty"`
	// LandlockABI is the kernel's Landlock ABI under the Landlock backend.
	LandlockABI int `json:"landlockABI,omitempty"`
	// Limits lists what this backend cannot enforce that bubblewrap does.
	Limits     []string `json:"limits,omitempty"`
	Reason     string   `json:"reason"`
	ConfigPath string   `json:"configPath,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	Policy     Policy   `json:"policy"`
	// MissingWhitelist lists whitelist entries that do not exist (skipped).
	MissingWhitelist []string `json:"missingWhitelist,omitempty"`
	// Hidden lists what the mounts hide right now (literal entries and glob
	// matches found within the bounded scan of the writable roots).
	Hidden []string `json:"hidden,omitempty"`
	// Protected lists paths kept read-only inside writable roots.
	Protected []string `json:"protected,omitempty"`
	// ScanTruncated is set when the glob scan stopped at its bound.
	ScanTruncated bool `json:"scanTruncated,omitempty"`
	// Unmounted lists the repositories past the mount budget: checked
	// after each command that changed their control folders instead.
	Unmounted []string `json:"unmounted,omitempty"`
}

// Headline is the status's first line: whether commands are sandboxed, by
// which backend.
func (s Status) Headline() string {
	switch {
	case s.Unavailable:
		return "Sandbox: UNAVAILABLE (every command is refused)"
	case s.Platform == "landlock":
		return fmt.Sprintf("Sandbox: ON (landlock ABI %d + seccomp, provider %s)", s.LandlockABI, s.Provider)
	case s.Enabled:
		return fmt.Sprintf("Sandbox: ON (%s, provider %s)", s.Platform, s.Provider)
	}
	return "Sandbox: OFF"
}

// Status reports the current decision and the policy commands run under.
func (m *Manager) Status() Status {
	p, _ := m.activePolicy()
	s := Status{
		Enabled:    m.enabled,
		Provider:   m.cfg.Provider,
		Platform:   "none",
		Reason:     m.reason,
		ConfigPath: m.opts.ConfigPath,
		Warnings:   m.Warnings(),
		Policy:     p,
	}
	if _, ok := m.provider.(unavailableProvider); ok {
		s.Unavailable = true
		return s
	}
	if m.enabled {
		switch m.opts.GOOS {
		case "linux":
			s.Platform = "bubblewrap"
			if m.landlock() {
				s.Platform, s.LandlockABI, s.Limits = "landlock", m.abi, landlockLimits(m.abi)
			}
			mp := planMounts(p, m.opts.Env)
			s.MissingWhitelist = mp.missing
			s.Hidden = append(append(s.Hidden, mp.hideDirs...), mp.hideFiles...)
			s.Protected = mp.protect
			s.ScanTruncated = mp.truncated
			s.Unmounted = mp.unmounted
		case "darwin":
			s.Platform = "sandbox-exec"
		}
	}
	return s
}

// String renders the status for people (synapse sandbox status, /sandbox).
func (s Status) String() string {
	var b strings.Builder
	b.WriteString(s.Headline() + "\n")
	fmt.Fprintf(&b, "Why: %s\n", s.Reason)
	if s.ConfigPath != "" {
		fmt.Fprintf(&b, "Config: %s\n", s.ConfigPath)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "Warning: %s\n", w)
	}
	if !s.Enabled || s.Unavailable {
		return b.String()
	}
	b.WriteString("Writable:\n")
	if s.Policy.ReadOnly && s.Platform == "bubblewrap" {
		fmt.Fprintf(&b, "  %s (a private, empty tmpfs; TMPDIR points at it)\n", PrivateTmp)
	} else if s.Platform == "landlock" {
		dir := s.Policy.TempDir
		if dir == "" {
			dir = "a private temp directory (made at the first command)"
		}
		fmt.Fprintf(&b, "  %s (this session's, removed at exit; TMPDIR points at it; the host's /tmp is unreadable)\n", dir)
	} else if s.Platform == "bubblewrap" {
		where := "a private directory made for the session"
		if s.Policy.TempDir != "" {
			where = "this session's private temp directory " + s.Policy.TempDir
		}
		fmt.Fprintf(&b, "  %s (%s, removed at exit; TMPDIR points at it; the host's /tmp is out of reach)\n", PrivateTmp, where)
	}
	for _, w := range s.Policy.Whitelist {
		note := ""
		if s.Policy.ReadOnly {
			note = " (read-only: this sandbox is read-only)"
			if w == s.Policy.TempDir {
				note = " (not writable: this sandbox is read-only)"
				if s.Platform == "bubblewrap" {
					note = " (not mounted: replaced by the private " + PrivateTmp + ")"
				}
			}
		}
		for _, m := range s.MissingWhitelist {
			if m == w {
				note = " (missing: skipped)"
			}
		}
		fmt.Fprintf(&b, "  %s%s\n", w, note)
	}
	b.WriteString("Everything else: read-only\n")
	fmt.Fprintf(&b, "Blacklist (neither readable nor writable): %s\n", strings.Join(s.Policy.Blacklist, ", "))
	if len(s.Hidden) > 0 {
		fmt.Fprintf(&b, "Hidden now: %s\n", strings.Join(s.Hidden, ", "))
	}
	if len(s.Protected) > 0 {
		fmt.Fprintf(&b, "Read-only inside writable roots: %s\n", strings.Join(s.Protected, ", "))
	}
	if n := len(s.Unmounted); n > 0 {
		fmt.Fprintf(&b, "Repositories past the mount budget (%d, from %s): not read-only; one a command arms is disabled by the checks that follow commands\n", n, s.Unmounted[0])
	}
	if s.ScanTruncated {
		fmt.Fprintf(&b, "Note: the blacklist scan stopped at its bound (%d entries, %d folders, the shallowest first); matches past it are refused by the command check only\n", maxScanEntries, maxScanFolders)
	}
	if s.Policy.AllowNetwork {
		b.WriteString("Network: allowed\n")
	} else {
		if s.Platform == "landlock" {
			b.WriteString("Network: blocked (seccomp refuses internet sockets; Landlock refuses TCP connect and bind)\n")
		} else {
			b.WriteString("Network: blocked (private network namespace with loopback only)\n")
		}
	}
	switch s.Platform {
	case "bubblewrap":
		b.WriteString("Processes: private PID namespace, no capabilities, no controlling terminal, killed with Synapse\n")
	case "landlock":
		b.WriteString("Processes: no capabilities, no new privileges, no controlling terminal; seccomp refuses ptrace, namespaces, mounts, io_uring, bpf, keyrings and sockets other than those allowed\n")
		b.WriteString("Not enforced by this backend (bubblewrap would):\n")
		for _, l := range s.Limits {
			fmt.Fprintf(&b, "  - %s\n", l)
		}
	}
	return b.String()
}
