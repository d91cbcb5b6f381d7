package mcp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// everythingServer is a config entry that starts MCP's reference server
// @modelcontextprotocol/server-everything (testdata/npm/mcpeverything)
// over stdio; without node or the package it skips, and fails under CI.
func everythingServer(t *testing.T) ServerConfig {
	t.Helper()
	nm := testutil.NodeModules(t, "mcpeverything", "@modelcontextprotocol/server-everything")
	node := testutil.RequireTool(t, "node")
	return ServerConfig{Name: "everything", Command: node,
		Args: []string{filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"},
		File: "test config"}
}

// TestEverythingServer drives resources, templates, prompts, resource
// links and structured content against the reference server as users run it.
func TestEverythingServer(t *testing.T) {
	mgr, h := newManager(t, Options{}, everythingServer(t))
	h.OutputDir = t.TempDir()
	if rep := mgr.Start(context.Background()); len(rep.Failures) > 0 {
		t.Fatalf("start: %q", rep.Failures)
	}
	tests := []struct {
		line string
		want []string
	}{
		{"mcp:everything", []string{"mcp:everything:get-resource-links", "Resources: ", "mcp:everything:@resources lists them", "Prompts: ", "mcp:everything:@prompts lists them"}},
		{"mcp:everything:@resources", []string{"demo://resource/static/document/features.md  (features.md, text/markdown)",
			"Resource templates (2)", "'demo://resource/dynamic/text/{resourceId}'", "'demo://resource/dynamic/blob/{resourceId}'"}},
		{"mcp:everything:@read demo://resource/static/document/features.md", []string{"[resource demo://resource/static/document/features.md, text/markdown]\n# Everything Server - Features"}},
		// Templates: a text one, and a blob one (its blob is base64 text/plain).
		{"mcp:everything:@read 'demo://resource/dynamic/text/{resourceId}' resourceId=3", []string{"[resource demo://resource/dynamic/text/3, text/plain]\nResource 3: This is a plaintext resource created at"}},
		{"mcp:everything:@read 'demo://resource/dynamic/blob/{resourceId}' resourceId=4", []string{"[resource demo://resource/dynamic/blob/4, text/plain, sent as a blob]\nResource 4: This is a base64 blob created at"}},
		{"mcp:everything:@prompts", []string{"mcp:everything:@prompt args-prompt city=<city> — A prompt with two arguments", "city (required): Name of the city", "mcp:everything:@prompt simple-prompt"}},
		{"mcp:everything:@prompt args-prompt city=Boston state=MA", []string{"[user]\nWhat's weather in Boston, MA?"}},
		{"mcp:everything:@prompt args-prompt --help", []string{"Usage: mcp:everything:@prompt args-prompt city=<city> [argument=value …]"}},
		{"mcp:everything:@prompt resource-prompt resourceType=Text resourceId=2", []string{"[embedded resource demo://resource/dynamic/text/2, text/plain]\nResource 2: This is a plaintext resource"}},
		{"mcp:everything:get-resource-links --count=2", []string{
			"[resource link: demo://resource/dynamic/blob/1 (Blob Resource 1), text/plain] Resource 1: plaintext resource\n  read it: mcp:everything:@read demo://resource/dynamic/blob/1",
			"[resource link: demo://resource/dynamic/text/2 (Text Resource 2), text/plain] Resource 2: plaintext resource\n  read it: mcp:everything:@read demo://resource/dynamic/text/2"}},
		// The text already holds the structured content's JSON: said, not repeated.
		{"mcp:everything:get-structured-content --location='New York'", []string{`{"temperature":33,"conditions":"Cloudy","humidity":82}`, "[structured content: the same JSON as the text above]"}},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			out := runOK(t, h, tc.line)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}

	// The command a resource link names reads it.
	out := runOK(t, h, "mcp:everything:get-resource-links --count=2")
	m := regexp.MustCompile(`read it: (mcp:everything:@read \S+/text/2)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no read command in:\n%s", out)
	}
	if got := runOK(t, h, m[1]); !strings.Contains(got, "Resource 2: This is a plaintext resource") {
		t.Errorf("%s:\n%s", m[1], got)
	}
}

// A tool that registers a session resource makes the server send
// resources/list_changed: the cached list picks it up, the link names its
// read command, and its binary (gzip) blob is saved to a file, not dumped.
func TestEverythingListChangedAndBinaryBlob(t *testing.T) {
	mgr, h := newManager(t, Options{}, everythingServer(t))
	h.OutputDir = t.TempDir()
	if rep := mgr.Start(context.Background()); len(rep.Failures) > 0 {
		t.Fatalf("start: %q", rep.Failures)
	}
	plain := "hello from synapse\n"
	data := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte(plain))
	out := runOK(t, h, "mcp:everything:gzip-file-as-resource --name=hello.txt.gz --data="+data)
	if want := "read it: mcp:everything:@read demo://resource/session/hello.txt.gz"; !strings.Contains(out, want) {
		t.Errorf("link output lacks %q:\n%s", want, out)
	}
	waitFor(t, "the session resource in the cached list", func() bool {
		for _, r := range mgr.CachedResources("everything").Resources {
			if r.URI == "demo://resource/session/hello.txt.gz" {
				return true
			}
		}
		return false
	})
	out = runOK(t, h, "mcp:everything:@read demo://resource/session/hello.txt.gz")
	m := regexp.MustCompile(`^\[resource demo://resource/session/hello.txt.gz: application/gzip, \d+ bytes of binary data, saved to (\S+\.gz)\]\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("read output:\n%q", out)
	}
	f, err := os.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, []byte(plain)) {
		t.Errorf("saved gzip holds %q (%v), want %q", got, err, plain)
	}
}
