package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// headerLog records the Authorization header of every request a server got.
type headerLog struct {
	mu   sync.Mutex
	auth []string
}

func (h *headerLog) handler(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	h.mu.Unlock()
	http.Error(w, "not an MCP server", http.StatusNotFound)
}

func (h *headerLog) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...)
}

// TestRedTeamProjectMCPNeedsApproval: a cloned repository's .mcp.json names
// a URL server with ${GITHUB_TOKEN} in a header and a stdio server. Before
// the user approves the file, Synapse neither contacts the URL nor starts the
// server; after `synapse mcp approve`, the URL is contacted but the token is
// sent only once the user lists it in settings.json "shareEnv"; a changed
// file needs approving again.
func TestRedTeamProjectMCPNeedsApproval(t *testing.T) {
	var log headerLog
	srv := httptest.NewServer(http.HandlerFunc(log.handler))
	t.Cleanup(srv.Close)
	env := append(testEnv(t), "GITHUB_TOKEN=ghp-user-secret")
	home := envValue(env, "SYNAPSE_HOME")
	proj := t.TempDir()
	marker := filepath.Join(proj, "server-started") // the server runs sandboxed: the project is where it can write
	mcpJSON := fmt.Sprintf(`{"mcpServers": {
		"tracker": {"url": %q, "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
		"local": {"command": "sh", "args": ["-c", "touch %s; exit 1"]}
	}}`, srv.URL+"/mcp", marker)
	testutil.WriteFile(t, filepath.Join(proj, ".mcp.json"), mcpJSON)

	r := synapseEnv(t, proj, env, "exec", "command:search anything")
	if n := len(log.seen()); n != 0 {
		t.Fatalf("an unapproved project file made Synapse contact its URL (%d requests, headers %q)", n, log.seen())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an unapproved project file's stdio server was started")
	}
	if !strings.Contains(r.stderr, "synapse mcp approve") || !strings.Contains(r.stderr, "tracker") {
		t.Errorf("stderr does not say how to approve: %s", r.stderr)
	}

	// Without a terminal, approving needs --yes; --list shows what is pending.
	if r := synapseEnv(t, proj, env, "mcp", "approve"); r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("approve without a terminal: %+v", r)
	}
	if r := synapseEnv(t, proj, env, "mcp", "approve", "--list"); !strings.Contains(r.stdout, "tracker: connects to "+srv.URL) || !strings.Contains(r.stdout, "Bearer ${GITHUB_TOKEN}") {
		t.Errorf("--list: %+v", r)
	}
	if r := synapseEnv(t, proj, env, "mcp", "approve", "--yes"); r.code != 0 || !strings.Contains(r.stdout, "Approved") {
		t.Fatalf("approve --yes: %+v", r)
	}
	synapseEnv(t, proj, env, "exec", "command:search anything")
	seen := log.seen()
	if len(seen) == 0 {
		t.Fatal("the approved URL server was not contacted")
	}
	for _, h := range seen {
		if strings.Contains(h, "ghp-") {
			t.Fatalf("a variable the user did not share was sent: %q", h)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the approved stdio server was not started")
	}

	testutil.WriteFile(t, filepath.Join(home, "settings.json"), `{"shareEnv": ["GITHUB_TOKEN"]}`)
	synapseEnv(t, proj, env, "exec", "command:search anything")
	if seen := log.seen(); !strings.Contains(strings.Join(seen, "\n"), "Bearer ghp-user-secret") {
		t.Errorf("a shared variable was not expanded: %q", seen)
	}

	// The repository changes the file: its servers stop until approved again.
	before := len(log.seen())
	testutil.WriteFile(t, filepath.Join(proj, ".mcp.json"), strings.Replace(mcpJSON, "/mcp", "/other", 1))
	r = synapseEnv(t, proj, env, "exec", "command:search anything")
	if len(log.seen()) != before || !strings.Contains(r.stderr, "not approved") {
		t.Errorf("a changed file was used without a new approval: %d requests, stderr %s", len(log.seen())-before, r.stderr)
	}
}

// TestRedTeamModelClone: the model asks for skill:import of a git URL, which
// makes the host clone from a place the model chose (the sandbox does not
// cover the host's own requests), then installs into the user store.
// synapse run refuses unless the user passed --allow-clone and
// --allow-skill-import; the real git clone happens only then. The REPL asks
// about each.
func TestRedTeamModelClone(t *testing.T) {
	testutil.RequireTool(t, "git")
	// Outside /tmp: the host's /tmp is out of the sandbox's reach, for
	// clones the model asks for too.
	repo := filepath.Join(testutil.OutsideTmp(t), "repo")
	testutil.WriteFile(t, filepath.Join(repo, "evil", "SKILL.md"), "---\nname: evil\ndescription: planted\n---\nbody\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "x"}} {
		c := exec.Command("git", args...)
		c.Dir = repo
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	importCmd := "skill:import file://" + repo
	t.Run("REPL asks", func(t *testing.T) {
		srv := llmtest.New(t,
			llmtest.BashTurn("a", importCmd), llmtest.TextTurn("refused"),
			llmtest.BashTurn("b", importCmd), llmtest.TextTurn("installed"))
		env := chatEnv(t, srv)
		installed := filepath.Join(envValue(env, "SYNAPSE_HOME"), "skills", "evil", "SKILL.md")
		p := startPTY(t, t.TempDir(), env)
		p.expect(prompt)
		p.send("install it\r")
		p.expect("asks to clone file://" + repo)
		p.expect("[2] no")
		p.send("2")
		p.expect("refused")
		if _, err := os.Stat(installed); err == nil {
			t.Fatal("installed although the user said no")
		}
		p.expect(prompt)
		p.send("again\r")
		p.expect("[2] no")
		p.send("1")
		p.expect(`asks to install the skill "evil"`)
		p.expect("[2] no")
		p.send("1")
		p.expect("installed")
		p.expect(prompt)
		p.send("/exit\r")
		p.wait()
		if _, err := os.Stat(installed); err != nil {
			t.Errorf("not installed after the user said yes: %v", err)
		}
	})
	for _, tc := range []struct {
		name    string
		flags   []string
		install bool
		why     string // the refusal names the flag that allows it
	}{
		{"without --allow-clone", []string{"--allow-skill-import"}, false, "--allow-clone"},
		{"without --allow-skill-import", []string{"--allow-clone"}, false, "--allow-skill-import"},
		{"with both", []string{"--allow-clone", "--allow-skill-import"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.BashTurn("c", importCmd), llmtest.TextTurn("done"))
			e := newRunEnv(t, srv, llmtest.FormatAnthropic)
			r := e.run(t, "", append(append([]string{"run"}, tc.flags...), "install the skill")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			_, err := os.Stat(filepath.Join(e.home, "skills", "evil", "SKILL.md"))
			if installed := err == nil; installed != tc.install {
				t.Fatalf("skill installed = %v, want %v", installed, tc.install)
			}
			if !tc.install {
				var res llmtest.ToolResult
				for _, req := range srv.Requests() {
					if tr, ok := req.ToolResult("c-1"); ok {
						res = tr
					}
				}
				if !strings.Contains(res.Content, tc.why) {
					t.Errorf("the model was not told why: %+v", res)
				}
			}
		})
	}
}

// TestRedTeamProjectMCPReplAsks: in the REPL the user is shown what a new
// project MCP file would run and asked before anything starts; "no" keeps
// the server off (and asks again next time), "yes" starts it and is
// remembered for this content.
func TestRedTeamProjectMCPReplAsks(t *testing.T) {
	srv := llmtest.New(t)
	env := chatEnv(t, srv)
	proj := t.TempDir()
	marker := filepath.Join(proj, "server-started") // the project is writable in the sandbox
	testutil.WriteFile(t, filepath.Join(proj, ".mcp.json"), fmt.Sprintf(
		`{"mcpServers": {"local": {"command": "sh", "args": ["-c", "touch %s; exit 1"]}}}`, marker))

	for i, answer := range []string{"n", "y", ""} {
		p := startPTY(t, proj, env)
		if answer != "" {
			p.expect("local: runs sh -c touch " + marker)
			p.expect("Approve this file for " + proj + "? [y/N]")
			p.send(answer + "\r")
		}
		p.expect(prompt)
		p.send("/exit\r")
		p.wait()
		_, err := os.Stat(marker)
		if started := err == nil; started != (i > 0) {
			t.Fatalf("after answer %q: server started = %v", answer, started)
		}
		if answer == "" && strings.Contains(p.screen(), "Approve this file") {
			t.Error("an approved file was asked about again")
		}
	}
}
