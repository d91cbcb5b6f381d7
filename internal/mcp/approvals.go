package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Approvals remembers which project MCP files the user approved, by project
// directory, file and content hash: a changed file needs a new approval.
// The file lives under $SYNAPSE_HOME, which the agent's commands cannot
// write, so a model cannot approve its own servers.
type Approvals struct {
	Path string // $SYNAPSE_HOME/mcp/approved_projects.json
}

// Approval is one approved file content.
type Approval struct {
	Project    string    `json:"project"`
	File       string    `json:"file"`
	SHA256     string    `json:"sha256"`
	Servers    []string  `json:"servers"`
	ApprovedAt time.Time `json:"approvedAt"`
}

type approvalsFile struct {
	Approvals []Approval `json:"approvals"`
}

// ContentHash is the hex SHA-256 of a file's content.
func ContentHash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// List returns every approval recorded. A missing file is none; a broken one
// is an error naming it.
func (a Approvals) List() ([]Approval, error) {
	data, err := os.ReadFile(a.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MCP approvals %s: %w", a.Path, err)
	}
	var f approvalsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("MCP approvals %s is not valid JSON (%v): fix or delete it, then approve again with `synapse mcp approve`", a.Path, err)
	}
	return f.Approvals, nil
}

// Approved reports whether content of file in project was approved. A
// broken approvals file approves nothing.
func (a Approvals) Approved(project, file string, content []byte) bool {
	list, err := a.List()
	if err != nil {
		return false
	}
	h := ContentHash(content)
	return slices.ContainsFunc(list, func(x Approval) bool {
		return x.Project == project && x.File == file && x.SHA256 == h
	})
}

// Approve records the approval of p (a file of project), replacing earlier
// approvals of the same file.
func (a Approvals) Approve(project string, p PendingFile, now time.Time) error {
	list, err := a.List()
	if err != nil {
		return err
	}
	list = slices.DeleteFunc(list, func(x Approval) bool { return x.Project == project && x.File == p.File })
	ap := Approval{Project: project, File: p.File, SHA256: ContentHash(p.Content), ApprovedAt: now.UTC()}
	for _, s := range p.Servers {
		ap.Servers = append(ap.Servers, s.Name)
	}
	list = append(list, ap)
	data, err := json.MarshalIndent(approvalsFile{Approvals: list}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(a.Path), 0o700); err != nil {
		return fmt.Errorf("record the approval: %w", err)
	}
	return fsutil.WriteFileAtomic(a.Path, append(data, '\n'), 0o600)
}

// Describe lists what p defines, for the user to judge before approving:
// each server's command line or URL, working directory, environment and
// header names (values as written, ${VAR} unexpanded). Text from the file
// is sanitized for the terminal.
func (p PendingFile) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s defines %d MCP server(s) that Synapse would start or connect to:\n", p.File, len(p.Servers))
	for _, s := range p.Servers {
		switch s.Kind() {
		case KindStdio:
			fmt.Fprintf(&b, "  %s: runs %s", s.Name, strings.Join(append([]string{s.Command}, s.Args...), " "))
		default:
			fmt.Fprintf(&b, "  %s: connects to %s (%s)", s.Name, s.URL, s.Kind())
		}
		if s.Cwd != "" {
			fmt.Fprintf(&b, " in %s", s.Cwd)
		}
		b.WriteString("\n")
		if names := keys(s.Env); len(names) > 0 {
			fmt.Fprintf(&b, "    env: %s\n", strings.Join(names, ", "))
		}
		if names := keys(s.Headers); len(names) > 0 {
			fmt.Fprintf(&b, "    headers: %s\n", strings.Join(names, ", "))
		}
	}
	return textutil.Sanitize(b.String())
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
