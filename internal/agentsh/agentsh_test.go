package agentsh

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/todo"
)

// Seed 003 "BaseAgentHandler 通用帮助行为": -h is the one-line usage, --help
// the detailed Markdown, both exit 0, for every command.
func TestHelpFlags(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	for _, name := range []string{"read", "write", "edit", "bash", "TodoWrite"} {
		t.Run(name, func(t *testing.T) {
			r := sh.Run(context.Background(), name+" -h")
			if r.ExitCode != 0 || r.Stdout != usage(name)+"\n" || !strings.HasPrefix(r.Stdout, "Usage: "+name) {
				t.Errorf("%s -h = %+v, want exit 0 and %q", name, r, usage(name))
			}
			if strings.Count(r.Stdout, "\n") != 1 {
				t.Errorf("%s -h is not one line: %q", name, r.Stdout)
			}
			r = sh.Run(context.Background(), name+" --help")
			if r.ExitCode != 0 || r.Stdout != Help(name) || !strings.Contains(r.Stdout, "USAGE:") || !strings.HasPrefix(r.Stdout, "# "+name) {
				t.Errorf("%s --help = %+v, want the Markdown help", name, r)
			}
		})
	}
	if n := len(ex.Calls()); n != 0 {
		t.Errorf("help ran %d commands in the shell", n)
	}
}

// Help flags are help only as a whole argument of the command itself.
func TestHelpOnlyAsWholeArgument(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	dir := ex.dir
	testutil.WriteFile(t, filepath.Join(dir, "e.txt"), "say -h now")
	tests := []struct {
		line     string
		wantHelp bool
		check    func(t *testing.T)
	}{
		{"read e.txt --help", true, nil},
		{"read e.txt -h", true, nil},
		{`read "-h"`, false, nil}, // a file literally named -h
		{`write notes.txt "use -h"`, false, func(t *testing.T) {
			if got := readFile(t, filepath.Join(dir, "notes.txt")); got != "use -h" {
				t.Errorf("notes.txt = %q", got)
			}
		}},
		{`write flags.txt --help`, false, func(t *testing.T) {
			if got := readFile(t, filepath.Join(dir, "flags.txt")); got != "--help" {
				t.Errorf("flags.txt = %q", got)
			}
		}},
		{`edit e.txt "-h" "--help"`, false, func(t *testing.T) {
			if got := readFile(t, filepath.Join(dir, "e.txt")); got != "say --help now" {
				t.Errorf("e.txt = %q", got)
			}
		}},
		{"write --help", true, nil},
		{"edit -h", true, nil},
		{"TodoWrite --help", true, nil},
	}
	for _, tt := range tests {
		r := sh.Run(context.Background(), tt.line)
		isHelp := r.ExitCode == 0 && (strings.HasPrefix(r.Stdout, "Usage: ") || strings.HasPrefix(r.Stdout, "# "))
		if isHelp != tt.wantHelp {
			t.Errorf("%s: help=%v, want %v (result %+v)", tt.line, isHelp, tt.wantHelp, r)
		}
		if tt.check != nil {
			tt.check(t)
		}
	}
}

// Seed 003 "BashWrapper 命令语义".
func TestBashWrapper(t *testing.T) {
	testutil.RequireTool(t, "bash")
	t.Run("help with any spacing does not execute", func(t *testing.T) {
		for _, line := range []string{"bash --help", "bash   --help", "bash\t--help  ", "bash --help echo hi"} {
			sh, ex := newTestShell(t, nil)
			r := sh.Run(context.Background(), line)
			if r.ExitCode != 0 || !strings.Contains(r.Stdout, "USAGE:") || !strings.Contains(r.Stdout, "bash <command>") {
				t.Errorf("%q = %+v", line, r)
			}
			if n := len(ex.Calls()); n != 0 {
				t.Errorf("%q executed %d commands", line, n)
			}
		}
	})
	t.Run("flags of the command are not help", func(t *testing.T) {
		sh, ex := newTestShell(t, nil)
		r := sh.Run(context.Background(), "bash echo -h")
		if r.ExitCode != 0 || r.Stdout != "-h\n" {
			t.Errorf("bash echo -h = %+v", r)
		}
		calls := ex.Calls()
		if len(calls) != 1 || calls[0].cmd != "echo -h" || calls[0].cwd != ex.dir {
			t.Errorf("calls = %+v, want one `echo -h` in %s", calls, ex.dir)
		}
	})
	t.Run("bare bash is a usage error", func(t *testing.T) {
		for _, line := range []string{"bash", "bash   "} {
			sh, ex := newTestShell(t, nil)
			r := sh.Run(context.Background(), line)
			if r.ExitCode == 0 || !strings.Contains(r.Stderr, "Usage: bash <command>") {
				t.Errorf("%q = %+v", line, r)
			}
			if len(ex.Calls()) != 0 {
				t.Errorf("%q executed something", line)
			}
		}
	})
	t.Run("bash program forms", func(t *testing.T) {
		sh, ex := newTestShell(t, nil)
		testutil.WriteFile(t, filepath.Join(ex.dir, "build.sh"), "echo built $1\n")
		tests := []struct{ line, wantCmd, wantOut string }{
			{"bash build.sh fast", "bash build.sh fast", "built fast\n"},
			{"bash -c 'echo inner'", "bash -c 'echo inner'", "inner\n"},
			{"bash pwd", "pwd", ex.dir + "\n"},
			{"bash exit 3", "exit 3", ""},
		}
		for i, tt := range tests {
			r := sh.Run(context.Background(), tt.line)
			calls := ex.Calls()
			if len(calls) != i+1 || calls[i].cmd != tt.wantCmd {
				t.Errorf("%q ran %+v, want %q", tt.line, calls, tt.wantCmd)
			}
			if r.Stdout != tt.wantOut {
				t.Errorf("%q stdout = %q, want %q", tt.line, r.Stdout, tt.wantOut)
			}
		}
		if r := sh.Run(context.Background(), "bash exit 3"); r.ExitCode != 3 {
			t.Errorf("exit code = %d, want 3", r.ExitCode)
		}
	})
	t.Run("no executor", func(t *testing.T) {
		sh := New(Options{})
		if r := sh.Run(context.Background(), "bash echo x"); r.ExitCode == 0 || !strings.Contains(r.Stderr, "no shell session") {
			t.Errorf("got %+v", r)
		}
	})
}

// Seed 003: ~ and ~/x expand to HOME (from the configuration) in read, write
// and edit.
func TestTildeExpansion(t *testing.T) {
	home := t.TempDir()
	cfg, err := config.Load(testutil.MapEnv(map[string]string{"HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := newTestShell(t, func(o *Options) { o.Home = cfg.UserHome })
	ctx := context.Background()
	if r := sh.Run(ctx, `write ~/x.txt "hello home"`); r.ExitCode != 0 {
		t.Fatalf("write: %+v", r)
	}
	if got := readFile(t, filepath.Join(home, "x.txt")); got != "hello home" {
		t.Fatalf("%s/x.txt = %q", home, got)
	}
	if r := sh.Run(ctx, "read ~/x.txt"); r.ExitCode != 0 || r.Stdout != "     1\thello home\n" {
		t.Errorf("read = %+v", r)
	}
	if r := sh.Run(ctx, "edit ~/x.txt home HOME"); r.ExitCode != 0 || !strings.Contains(r.Stdout, filepath.Join(home, "x.txt")) {
		t.Errorf("edit = %+v", r)
	}
	if got := readFile(t, filepath.Join(home, "x.txt")); got != "hello HOME" {
		t.Errorf("after edit = %q", got)
	}
	if r := sh.Run(ctx, "read ~"); r.ExitCode == 0 || !strings.Contains(r.Stderr, home+" is a directory") {
		t.Errorf("read ~ = %+v", r)
	}
	// ~user is not expanded.
	if r := sh.Run(ctx, "read ~root/x.txt"); r.ExitCode == 0 || strings.Contains(r.Stderr, home) {
		t.Errorf("read ~root/x.txt = %+v", r)
	}
}

func TestRelativePathsUseSessionCwd(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	testutil.WriteFile(t, filepath.Join(ex.dir, "sub", "a.txt"), "in session dir\n")
	r := sh.Run(context.Background(), "read sub/a.txt")
	if r.ExitCode != 0 || r.Stdout != "     1\tin session dir\n" {
		t.Fatalf("read = %+v", r)
	}
	if r := sh.Run(context.Background(), "write sub/b.txt x"); r.ExitCode != 0 {
		t.Fatalf("write = %+v", r)
	}
	if got := readFile(t, filepath.Join(ex.dir, "sub", "b.txt")); got != "x" {
		t.Errorf("b.txt = %q", got)
	}
}

func TestUnknownCommand(t *testing.T) {
	sh, _ := newTestShell(t, nil)
	if r := sh.Run(context.Background(), "readx a"); r.ExitCode != 1 || !strings.Contains(r.Stderr, "not an Agent Shell command") {
		t.Errorf("got %+v", r)
	}
}

func TestCanceledContext(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, line := range []string{"read a", "write a b", "bash echo hi"} {
		if r := sh.Run(ctx, line); r.ExitCode != 130 {
			t.Errorf("%q = %+v, want exit 130", line, r)
		}
	}
	if len(ex.Calls()) != 0 {
		t.Errorf("a canceled command reached the shell")
	}
	if _, err := os.Stat(filepath.Join(ex.dir, "a")); err == nil {
		t.Errorf("a canceled write wrote")
	}
}

func TestPathCheckerBlocks(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	secret := filepath.Join(ex.dir, "secret")
	testutil.WriteFile(t, filepath.Join(secret, "k.txt"), "key")
	sh.opts.Paths = denyUnder{secret}
	for _, line := range []string{"read secret/k.txt", "write secret/k.txt new", "edit secret/k.txt key lock", "write secret/n.txt x"} {
		r := sh.Run(context.Background(), line)
		if !r.Blocked || r.BlockedResource == "" || r.BlockedReason != "outside the allowed directories" || r.ExitCode == 0 ||
			!strings.Contains(r.Stderr, "blocked by the sandbox policy") {
			t.Errorf("%q = %+v, want blocked", line, r)
		}
	}
	if got := readFile(t, filepath.Join(secret, "k.txt")); got != "key" {
		t.Errorf("blocked write changed the file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(secret, "n.txt")); err == nil {
		t.Errorf("blocked write created a file")
	}
	// A symlink from an allowed place into the blocked one is blocked too.
	if err := os.Symlink(filepath.Join(secret, "k.txt"), filepath.Join(ex.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if r := sh.Run(context.Background(), "read link"); !r.Blocked {
		t.Errorf("read through symlink = %+v, want blocked", r)
	}
}

// Seed 001 "TodoWrite 限制同一时刻最多 1 个 in_progress" and the limits.
func TestTodoWrite(t *testing.T) {
	item := func(content, status string) string {
		return fmt.Sprintf(`{"content":%q,"activeForm":%q,"status":%q}`, content, content+"ing", status)
	}
	list := func(items ...string) string { return `{"todos":[` + strings.Join(items, ",") + `]}` }
	many := func(n int) string {
		var items []string
		for i := range n {
			items = append(items, item(fmt.Sprint("task ", i), "pending"))
		}
		return list(items...)
	}
	tests := []struct {
		name    string
		env     map[string]string
		line    string
		wantErr string // "" = success
		wantN   int
	}{
		{"valid", nil, "TodoWrite '" + list(item("a", "completed"), item("b", "in_progress"), item("c", "pending")) + "'", "", 3},
		{"two in progress", nil, "TodoWrite '" + list(item("a", "in_progress"), item("b", "in_progress")) + "'", "Too many in_progress items", 0},
		{"env limit applies", map[string]string{"SYNAPSE_TODO_MAX_ITEMS": "3"}, "TodoWrite '" + many(4) + "'", "limit is 3", 0},
		{"env limit allows", map[string]string{"SYNAPSE_TODO_MAX_ITEMS": "3"}, "TodoWrite '" + many(3) + "'", "", 3},
		{"invalid env falls back (under)", map[string]string{"SYNAPSE_TODO_MAX_ITEMS": "abc"}, "TodoWrite '" + many(50) + "'", "", 50},
		{"invalid env falls back (over)", map[string]string{"SYNAPSE_TODO_MAX_ITEMS": "abc"}, "TodoWrite '" + many(51) + "'", "limit is 50", 0},
		{"zero env falls back", map[string]string{"SYNAPSE_TODO_MAX_ITEMS": "0"}, "TodoWrite '" + many(51) + "'", "limit is 50", 0},
		{"unknown field", nil, `TodoWrite '{"todos":[{"content":"a","activeForm":"b","status":"pending","prio":1}]}'`, "unknown field", 0},
		{"unknown top field", nil, `TodoWrite '{"todos":[],"x":1}'`, "unknown field", 0},
		{"bad status", nil, "TodoWrite '" + list(item("a", "done")) + "'", `todos[0].status is "done"`, 0},
		{"missing activeForm", nil, `TodoWrite '{"todos":[{"content":"a","status":"pending"}]}'`, "todos[0].activeForm is missing", 0},
		{"empty content", nil, `TodoWrite '{"todos":[{"content":" ","activeForm":"b","status":"pending"}]}'`, "todos[0].content is missing or empty", 0},
		{"content too long", nil, "TodoWrite '" + list(item(strings.Repeat("x", 501), "pending")) + "'", "the limit is 500 (SYNAPSE_TODO_MAX_CONTENT_LENGTH)", 0},
		{"content env limit applies", map[string]string{"SYNAPSE_TODO_MAX_CONTENT_LENGTH": "10"}, "TodoWrite '" + list(item(strings.Repeat("x", 11), "pending")) + "'", "todos[0].content is 11 characters, the limit is 10", 0},
		{"content env limit allows", map[string]string{"SYNAPSE_TODO_MAX_CONTENT_LENGTH": "600"}, "TodoWrite '" + list(item(strings.Repeat("x", 590), "pending")) + "'", "", 1},
		{"invalid content env falls back (under)", map[string]string{"SYNAPSE_TODO_MAX_CONTENT_LENGTH": "lots"}, "TodoWrite '" + list(item(strings.Repeat("x", 496), "pending")) + "'", "", 1},
		{"invalid content env falls back (over)", map[string]string{"SYNAPSE_TODO_MAX_CONTENT_LENGTH": "-5"}, "TodoWrite '" + list(item(strings.Repeat("x", 501), "pending")) + "'", "the limit is 500", 0},
		{"missing todos", nil, `TodoWrite '{}'`, `missing "todos"`, 0},
		{"not json", nil, `TodoWrite 'hello'`, "invalid JSON", 0},
		{"trailing text", nil, `TodoWrite '{"todos":[]} x'`, "unexpected text", 0},
		{"wrong type", nil, `TodoWrite '{"todos":{}}'`, `invalid JSON: "todos" must be an array, not an object`, 0},
		{"a bare array", nil, `TodoWrite '[` + item("a", "pending") + `]'`, "invalid JSON: the top level must be an object, not an array", 0},
		{"a number for a string", nil, `TodoWrite '{"todos":[{"content":1,"activeForm":"b","status":"pending"}]}'`, `"todos.content" must be a string, not a number`, 0},
		{"empty clears", nil, `TodoWrite '{"todos":[]}'`, "", 0},
		{"unquoted json", nil, "TodoWrite " + list(item("a", "pending")), "", 1},
		{"heredoc", nil, "TodoWrite <<'EOF'\n" + list(item("it's", "pending")) + "\nEOF", "", 1},
		{"missing", nil, "TodoWrite", "Usage: TodoWrite", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(testutil.MapEnv(mergeEnv(tt.env, map[string]string{"HOME": t.TempDir()})))
			if err != nil {
				t.Fatal(err)
			}
			store := &todo.Store{}
			prior := []todo.Item{{Content: "prior", ActiveForm: "prioring", Status: todo.Pending}}
			store.Set(prior)
			notified := 0
			store.OnChange(func([]todo.Item) { notified++ })
			sh := New(Options{Todos: store, TodoMaxItems: cfg.TodoMaxItems, TodoMaxContent: cfg.TodoMaxContent})
			r := sh.Run(context.Background(), tt.line)
			if tt.wantErr != "" {
				if r.ExitCode != 1 || !strings.Contains(r.Stderr, tt.wantErr) {
					t.Errorf("got %+v, want exit 1 with %q", r, tt.wantErr)
				}
				if got := store.Items(); len(got) != 1 || got[0] != prior[0] || notified != 0 {
					t.Errorf("a rejected list changed the store: %+v (notified %d)", got, notified)
				}
				return
			}
			if r.ExitCode != 0 {
				t.Fatalf("got %+v, want success", r)
			}
			if n := len(store.Items()); n != tt.wantN || notified != 1 {
				t.Errorf("store has %d items (notified %d), want %d", n, notified, tt.wantN)
			}
		})
	}
}

func TestTodoWriteOutput(t *testing.T) {
	store := &todo.Store{}
	sh := New(Options{Todos: store})
	r := sh.Run(context.Background(), `TodoWrite '{"todos":[{"content":"Run tests","activeForm":"Running tests","status":"in_progress"},{"content":"Ship","activeForm":"Shipping","status":"pending"}]}'`)
	want := "Todos updated: 0 completed, 1 in progress, 1 pending\n[>] Run tests\n[ ] Ship\n"
	if r.Stdout != want {
		t.Errorf("output = %q, want %q", r.Stdout, want)
	}
	if got := store.Items(); got[0].ActiveForm != "Running tests" || got[0].Status != todo.InProgress {
		t.Errorf("store = %+v", got)
	}
}

func mergeEnv(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
