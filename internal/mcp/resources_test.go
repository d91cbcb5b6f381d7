package mcp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
)

// resourceServer is a config entry that starts the test server over stdio
// with the resource tools (structured, links, publish).
func resourceServer(t testing.TB, name string) ServerConfig {
	c := stdioServer(t, name)
	c.Env["SYNAPSE_MCPTEST_SERVER"] = "stdio-resources"
	return c
}

func TestResourceAndPromptCommands(t *testing.T) {
	mgr, h := newManager(t, Options{}, resourceServer(t, "test"))
	h.OutputDir = t.TempDir()
	mgr.Start(context.Background())

	tests := []struct {
		line string
		exit int
		want []string
		not  []string
	}{
		{"mcp:test:@resources", 0, []string{
			`MCP server "test" has 3 resources:`,
			"mem://docs/readme  (Readme, text/markdown) — How to use the test server.",
			"mem://data/blob.bin  (blob, application/octet-stream, 8 bytes)",
			"Resource templates (1)",
			"'mem://notes/{id}'  (note, text/plain) — A note by id.",
			"Read one with mcp:test:@read <uri>; a template with mcp:test:@read 'mem://notes/{id}' id=<value>."}, nil},
		{"mcp:test:@read mem://docs/readme", 0, []string{"[resource mem://docs/readme, text/markdown]\n" + mcptest.ReadmeText}, nil},
		{"mcp:test:@read 'mem://notes/{id}' id=42", 0, []string{"[resource mem://notes/42, text/plain]\nnote 42"}, nil},
		{"mcp:test:@read 'mem://notes/{id}' --id 7", 0, []string{"note 7"}, nil},
		{"mcp:test:@read 'mem://notes/{id}'", 1, []string{"give its variables: mcp:test:@read 'mem://notes/{id}' id=<value> (nothing was read)"}, nil},
		{"mcp:test:@read 'mem://notes/{id}' id=1 other=2", 1, []string{"the template has no variable other"}, nil},
		{"mcp:test:@read mem://docs/readme id=1", 1, []string{"fill a resource template's {variables}"}, nil},
		{"mcp:test:@read mem://nothing/here", 1, []string{`MCP server "test" rejected reading mem://nothing/here`}, nil},
		{"mcp:test:@read", 1, []string{"a URI is needed", "Usage: mcp:test:@read <uri>"}, nil},
		{"mcp:test:@read --help", 0, []string{"Usage: mcp:test:@read <uri>", "RFC 6570", "Reading changes nothing."}, nil},
		{"mcp:test:@prompts", 0, []string{`MCP server "test" has 2 prompts:`,
			"mcp:test:@prompt greet name=<name> — Greet someone.", "name (required): Who to greet.", "tone (optional): How: warm or dry.",
			"mcp:test:@prompt plain — A prompt without arguments."}, nil},
		{"mcp:test:@prompt greet name=Ann tone=dry", 0, []string{`Prompt greet of MCP server "test": A greeting.`,
			"[user]\nSay hello to Ann in a dry tone.", "[user]\n[embedded resource mem://docs/readme, text/markdown]\n# Readme", "[assistant]\nHello!"}, nil},
		{"mcp:test:@prompt greet --name 'Bo Li'", 0, []string{"Say hello to Bo Li in a warm tone."}, nil},
		{"mcp:test:@prompt greet", 1, []string{"missing required arguments: name (nothing was sent)", "Arguments (strings"}, nil},
		{"mcp:test:@prompt greet name=a mood=x", 1, []string{"unknown arguments: mood"}, nil},
		{"mcp:test:@prompt greet --help", 0, []string{"mcp:test:@prompt greet — Greet someone.", "Usage: mcp:test:@prompt greet name=<name> [argument=value …]", "tone (optional) — How: warm or dry."}, nil},
		{"mcp:test:@prompt nope", 1, []string{`MCP server "test" has no prompt "nope". Its prompts: greet, plain`}, nil},
		{"mcp:test:@bogus", 1, []string{"mcp:test:@resources, mcp:test:@read, mcp:test:@prompts, mcp:test:@prompt"}, nil},
		{"mcp:test:@resources extra", 1, []string{"takes no arguments"}, nil},
		{"mcp:test", 0, []string{"Resources: 3, templates: 1 — mcp:test:@resources lists them, mcp:test:@read <uri> reads one.",
			"Prompts: 2 — mcp:test:@prompts lists them, mcp:test:@prompt <name> argument=value … gets one."}, nil},
		{"mcp:test:links", 0, []string{"[resource link: mem://docs/readme (readme), text/markdown]\n  read it: mcp:test:@read mem://docs/readme",
			"[embedded resource mem://data/blob.bin: application/octet-stream, 8 bytes of binary data, saved to " + h.OutputDir + "/mcp-blob-"}, []string{"\x00"}},
		{"mcp:test --help", 0, []string{`MCP server "test" has 14 tools`, "mcp:test:structured", "Resources: 3, templates: 1", "Prompts: 2"}, nil},
		{"mcp:test:structured", 0, []string{"Sunny in Paris\n[structured content]\n{\n  \"city\": \"Paris\",\n  \"temperature\": 21\n}\n"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			r := h.Run(context.Background(), tc.line)
			out := r.Stdout + r.Stderr
			if r.ExitCode != tc.exit {
				t.Errorf("exit %d, want %d\n%s", r.ExitCode, tc.exit, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
		})
	}
}

// The bytes of a blob resource go to a file named in the text; an image
// blob is attached as an image instead.
func TestReadBlobResourceSavesFile(t *testing.T) {
	_, h := newManager(t, Options{}, resourceServer(t, "test"))
	h.OutputDir = t.TempDir()
	r := h.Run(context.Background(), "mcp:test:@read mem://data/blob.bin")
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	m := regexp.MustCompile(`^\[resource mem://data/blob.bin: application/octet-stream, 8 bytes of binary data, saved to (\S+\.bin)\]\n$`).FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("no saved file named:\n%q", r.Stdout)
	}
	if filepath.Dir(m[1]) != h.OutputDir {
		t.Errorf("saved to %s, want a file in %s", m[1], h.OutputDir)
	}
	if got, err := os.ReadFile(m[1]); err != nil || !bytes.Equal(got, mcptest.Blob) {
		t.Errorf("file holds %q (%v), want %q", got, err, mcptest.Blob)
	}

	r = h.Run(context.Background(), "mcp:test:@read mem://img/logo.png")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "[resource mem://img/logo.png: image/png, ") || !strings.Contains(r.Stdout, "attached as image 1]") {
		t.Fatalf("image: exit %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if len(r.Images) != 1 || !bytes.Equal(r.Images[0].Data, mcptest.PNG()) || r.Images[0].MediaType != "image/png" {
		t.Errorf("image attachments = %d, want the PNG", len(r.Images))
	}
}

// A server's resources/list_changed and prompts/list_changed refresh the
// cached lists that listings and command:search read.
func TestListChangedRefreshesResourcesAndPrompts(t *testing.T) {
	mgr, h := newManager(t, Options{}, resourceServer(t, "test"))
	mgr.Start(context.Background())
	if n := len(mgr.CachedResources("test").Resources); n != 3 {
		t.Fatalf("cached resources at start = %d, want 3", n)
	}
	runOK(t, h, "mcp:test:publish --name=fresh")
	waitFor(t, "the refreshed lists", func() bool {
		rl, pl := mgr.CachedResources("test"), mgr.CachedPrompts("test")
		hasRes := false
		for _, r := range rl.Resources {
			hasRes = hasRes || r.URI == "mem://published/fresh"
		}
		hasPrompt := false
		for _, p := range pl.Prompts {
			hasPrompt = hasPrompt || p.Name == "fresh"
		}
		return hasRes && hasPrompt
	})
	var cmds []string
	for _, c := range mgr.ExtraCommands() {
		cmds = append(cmds, c.Command)
	}
	for _, want := range []string{"mcp:test:@resources", "mcp:test:@read <uri>", "mcp:test:@prompts", "mcp:test:@prompt greet", "mcp:test:@prompt fresh"} {
		if !strings.Contains(strings.Join(cmds, "\n")+"\n", want+"\n") {
			t.Errorf("ExtraCommands lacks %q: %q", want, cmds)
		}
	}
	if out := runOK(t, h, "mcp:test:@read mem://published/fresh"); !strings.Contains(out, "published fresh") {
		t.Errorf("reading the published resource: %q", out)
	}
}

// waitFor polls cond until it holds, failing after a generous bound (the
// condition, not the time, is what the test waits on).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNamedValues(t *testing.T) {
	tests := []struct {
		words   []string
		want    map[string]string
		wantErr string
	}{
		{nil, map[string]string{}, ""},
		{[]string{"city=Boston", "--state=MA", "--note", "a b", "empty="}, map[string]string{"city": "Boston", "state": "MA", "note": "a b", "empty": ""}, ""},
		{[]string{"q=a=b"}, map[string]string{"q": "a=b"}, ""},
		{[]string{"Boston"}, nil, `"Boston" is not name=value`},
		{[]string{"=x"}, nil, "has no name before ="},
		{[]string{"--city"}, nil, "--city needs a value"},
		{[]string{"a=1", "--a=2"}, nil, "a is given twice"},
	}
	for _, tc := range tests {
		got, err := namedValues(tc.words)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("namedValues(%q) error = %v, want %q", tc.words, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("namedValues(%q) = %v, %v; want %v", tc.words, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("namedValues(%q)[%s] = %q, want %q", tc.words, k, got[k], v)
			}
		}
	}
}

// structuredContent reaches the model next to the text: as JSON after it,
// alone when there is no text, or as one line when a text block already
// holds the same JSON (the specification's fallback for older clients).
func TestFormatToolResultStructuredContent(t *testing.T) {
	data := map[string]any{"city": "Paris", "temperature": 21}
	tests := []struct {
		name    string
		content []sdk.Content
		want    string
	}{
		{"with other text", []sdk.Content{&sdk.TextContent{Text: "Sunny"}},
			"Sunny\n[structured content]\n{\n  \"city\": \"Paris\",\n  \"temperature\": 21\n}\n"},
		{"alone", nil, "{\n  \"city\": \"Paris\",\n  \"temperature\": 21\n}\n"},
		{"same JSON as the text", []sdk.Content{&sdk.TextContent{Text: `{"temperature":21, "city":"Paris"}`}},
			"{\"temperature\":21, \"city\":\"Paris\"}\n[structured content: the same JSON as the text above]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := FormatToolResult(&sdk.CallToolResult{Content: tc.content, StructuredContent: data}, "s", nil)
			if got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
