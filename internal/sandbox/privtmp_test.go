package sandbox

import "testing"

// TestHostTmpHidden: the host /tmp paths in-process file commands must
// refuse are exactly those the bubblewrap mounts hide from commands.
func TestHostTmpHidden(t *testing.T) {
	writable := Policy{TempDir: "/tmp/synapse-1-tmp-x", Whitelist: []string{"/work/proj", "/tmp/ws"},
		Visible: []string{"/tmp/synapse-scratch-1"}, Protect: []string{"/tmp/home/.synapse"}}
	readOnly := writable
	readOnly.ReadOnly, readOnly.TempDir = true, ""
	tests := []struct {
		name string
		p    Policy
		path string
		want bool
	}{
		{"host tmp file", writable, "/tmp/secret", true},
		{"host tmp itself", writable, "/tmp", true},
		{"private temp dir", writable, "/tmp/synapse-1-tmp-x/made", false},
		{"workspace under tmp", writable, "/tmp/ws/a.go", false},
		{"scratch dir", writable, "/tmp/synapse-scratch-1/out", false},
		{"agent home", writable, "/tmp/home/.synapse/skills", false},
		{"home beside agent home", writable, "/tmp/home/.bashrc", true},
		{"outside tmp", writable, "/etc/passwd", false},
		{"prefix is not within", writable, "/tmpfoo/x", false},
		{"no private tmp (not made)", Policy{Whitelist: []string{"/work"}}, "/tmp/secret", false},
		{"read-only: host tmp", readOnly, "/tmp/secret", true},
		{"read-only: workspace under tmp", readOnly, "/tmp/ws/a.go", false},
		{"read-only: scratch not bound", readOnly, "/tmp/synapse-scratch-1/out", true},
		{"read-only: whitelisted scratch", Policy{ReadOnly: true, Whitelist: []string{"/tmp/synapse-scratch-1"}}, "/tmp/synapse-scratch-1/out", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.hostTmpHidden(tt.path); got != tt.want {
				t.Errorf("hostTmpHidden(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}
