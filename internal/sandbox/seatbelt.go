package sandbox

import (
	"fmt"
	"strings"
)

// seatbeltProfile generates the macOS sandbox-exec (Seatbelt) profile for a
// policy: deny by default, reads allowed broadly, writes only under the
// whitelist, no network unless allowed, and the blacklist denied for reads and
// writes. Seatbelt applies the last matching rule, so the deny rules come after
// the allow rules they override.
func seatbeltProfile(p Policy) string {
	var b strings.Builder
	b.WriteString("(version 1)\n")
	b.WriteString("(deny default)\n")
	b.WriteString("(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n")
	b.WriteString("(allow file-read*)\n")
	b.WriteString("(allow file-write-data (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/dtracehelper\") (regex #\"^/dev/tty\"))\n")
	// Seatbelt cannot give a private /tmp: a ReadOnly profile allows no
	// file writes at all (the host temp dir included).
	if !p.ReadOnly {
		for _, w := range p.Whitelist {
			fmt.Fprintf(&b, "(allow file-write* (subpath %s))\n", sbString(w))
		}
		// Protected directories are read-only inside writable roots; a
		// writable root inside one is allowed again (last match wins).
		for _, pr := range p.Protect {
			fmt.Fprintf(&b, "(deny file-write* (subpath %s))\n", sbString(pr))
			for _, w := range p.Whitelist {
				if w != pr && within(w, pr) {
					fmt.Fprintf(&b, "(allow file-write* (subpath %s))\n", sbString(w))
				}
			}
		}
	}
	if p.AllowNetwork {
		b.WriteString("(allow network*)\n")
	} else {
		b.WriteString("(deny network*)\n")
	}
	for _, r := range compileRules(p.Blacklist, p.Home) {
		if r.re != nil {
			// #"..." is a raw regex literal: backslashes stay as they are; a
			// quote (rare in a path) is widened to "any character".
			fmt.Fprintf(&b, "(deny file-read* file-write* (regex #\"%s\"))\n", strings.ReplaceAll(r.re.String(), `"`, "."))
		} else {
			fmt.Fprintf(&b, "(deny file-read* file-write* (subpath %s))\n", sbString(r.path))
		}
	}
	return b.String()
}

// sbString quotes s as a Seatbelt (Scheme) string literal.
func sbString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
