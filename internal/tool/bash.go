package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// Name is the tool's name as the model sees it.
const Name = "Bash"

// Executor runs native command lines in the agent's one shell session: the
// sandbox manager in production.
type Executor interface {
	Execute(ctx context.Context, command, cwd string) (command.Result, error)
	Cwd() string
	Restart(ctx context.Context) error
}

// Whitelister grants access to paths the sandbox refused. The sandbox
// manager implements it; AddPermanentWhitelist also grants for the session.
type Whitelister interface {
	AddRuntimeWhitelist(path string) error
	RemoveRuntimeWhitelist(path string) error
	AddPermanentWhitelist(path string) error
}

// Options configures a Bash tool.
type Options struct {
	// Exec runs native commands (and restarts the shell).
	Exec Executor
	// Agent runs the Agent Shell builtins: read, write, edit, bash, TodoWrite
	// (an *agentsh.Shell sharing Exec).
	Agent command.Handler
	// Handlers serve the other families: router.FamilyTask, FamilySkill,
	// FamilySearch, FamilyMCP, FamilySkillScript. A missing one answers
	// "not available".
	Handlers map[router.Family]command.Handler
	// Whitelist grants access after an approval or AllowPermanent; nil means
	// Exec when it implements Whitelister.
	Whitelist Whitelister
	// Approver, when set, is asked about commands the sandbox blocked.
	Approver Approver
	// OutputCap is the most characters of output the model sees
	// (config.Config.OutputCap); the rest is saved to a file.
	OutputCap int
	// OutputDir receives full outputs that were cut (default: the system temp dir).
	OutputDir string
	// Home expands ~ in AllowPermanent paths (config.Config.UserHome).
	Home string
	// Scratch is what the ask permission mode lets run without asking:
	// writes inside its scratch list (the zero value: every write asks).
	Scratch writecheck.Checker
}

// Bash is the one tool the model gets.
type Bash struct {
	opts Options
}

// Prepare starts the shell in the background when it has not started
// yet (the sandbox manager's Prepare): the agent calls it when the model
// begins a call, so the command finds the shell ready.
func (b *Bash) Prepare() {
	if p, ok := b.opts.Exec.(interface{ Prepare() }); ok {
		p.Prepare()
	}
}

// New returns the Bash tool.
func New(opts Options) *Bash {
	if opts.OutputCap <= 0 {
		opts.OutputCap = config.DefaultOutputCap
	}
	if opts.Whitelist == nil {
		if w, ok := opts.Exec.(Whitelister); ok {
			opts.Whitelist = w
		}
	}
	return &Bash{opts: opts}
}

//go:embed description.md
var description string

// inputSchema is the JSON schema of Input.
const inputSchema = `{
  "type": "object",
  "properties": {
    "command": {
      "type": "string",
      "description": "The command line to run: a native shell command, an Agent Shell command (read, write, edit, bash, TodoWrite, task:<type>, skill:<action>, command:search) or an extension command (mcp:<server>:<tool>, skill:<skill>:<script>)."
    },
    "restart": {
      "type": "boolean",
      "default": false,
      "description": "Restart the shell session first (fresh environment, initial directory). Use when the shell is stuck or broken."
    }
  },
  "required": ["command"],
  "additionalProperties": false
}`

// Spec describes the tool to the model.
func (b *Bash) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: Name, Description: description, InputSchema: json.RawMessage(inputSchema)}
}

// Call runs the tool with the model's raw JSON arguments.
func (b *Bash) Call(ctx context.Context, input json.RawMessage) Result {
	in, err := DecodeInput(input)
	if err != nil {
		return inputError(err)
	}
	return b.Run(ctx, in)
}

// DecodeInput parses the tool's arguments. Unknown fields are ignored.
func DecodeInput(raw json.RawMessage) (Input, error) {
	var in Input
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return in, errors.New("the arguments are empty")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return in, fmt.Errorf("%q must be a %s, not a JSON %s", typ.Field, typeName(typ.Type.Kind().String()), typ.Value)
		}
		return in, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	return in, nil
}

func typeName(kind string) string {
	if kind == "bool" {
		return "boolean"
	}
	return kind
}

func inputError(err error) Result {
	msg := "Invalid Bash input: " + err.Error() + `. Call it as {"command": "<command line>"}, optionally with "restart": true.`
	return Result{Output: msg, IsError: true, Message: msg, Facts: Facts{FailureCategory: FailureInvalidUsage}}
}

// Run executes one command line (after restarting the shell when asked).
func (b *Bash) Run(ctx context.Context, in Input) Result {
	if next := hookChanged(ctx, in.Command); next != "" {
		// A PreToolUse hook's updatedInput: the first change of the call,
		// run like the host's (checked and asked about as any command).
		out := b.run(ctx, Input{Command: next, Restart: in.Restart}, &Rewrite{Original: in.Command, Count: 1})
		out.Output = HookChangeNote(next) + "\n" + out.Output
		return out
	}
	return b.run(ctx, in, &Rewrite{Original: in.Command})
}

// run is Run with the call's Rewrite: when the gate's question was
// answered with another command (rw.Next), that one runs instead, through
// the whole pipeline (routed, checked, asked about again), and the model
// is told of the change.
func (b *Bash) run(ctx context.Context, in Input, rw *Rewrite) Result {
	cmd := in.Command
	if in.Restart {
		if b.opts.Exec == nil {
			return failure(FailureExecution, "Restart failed: there is no shell session in this context.", "restart failed")
		}
		if err := b.opts.Exec.Restart(ctx); err != nil {
			return failure(FailureExecution, "Restart failed: "+err.Error(), "restart failed")
		}
		if strings.TrimSpace(cmd) == "" {
			return Result{Output: "Shell session restarted: fresh environment, current directory " + b.opts.Exec.Cwd() + ".",
				Facts: Facts{Restarted: true}}
		}
	}
	if strings.TrimSpace(cmd) == "" {
		return inputError(errors.New(`"command" is empty`))
	}
	if r, ok := toolCallAsCommand(cmd); ok {
		return r
	}
	route := router.Classify(cmd)
	res, ap, err := b.runApproved(ctx, route, cmd, rw)
	if next := rw.Next; next != nil {
		res.DropSpill()
		out := b.run(ctx, *next, &Rewrite{Original: rw.Original, Count: rw.Count + 1})
		change := "[The user changed the command to: " + next.Command
		if next.Restart {
			change += " (with a shell restart)"
		}
		out.Output = change + "]\n" + out.Output
		return out
	}
	out := b.shape(ctx, route, cmd, res, err)
	if ap.note != "" {
		out.Output += "\n" + ap.note
	}
	if len(ap.decisions) > 0 {
		out.Facts.Approval = ap.decisions
	}
	if in.Restart {
		out.Facts.Restarted = true
	}
	return out
}

// dispatch sends the command to its layer. Only native commands reach the
// executor; Agent Shell and extension commands never do (the bash wrapper
// reaches it through the Agent Shell, on purpose).
// cwd is the session's directory when the call started: a retry after a
// grant (which may rebuild the sandbox) runs where the first attempt did.
func (b *Bash) dispatch(ctx context.Context, route router.Route, cmd, cwd string) (command.Result, error) {
	switch route.Family {
	case router.FamilyNative:
		if b.opts.Exec == nil {
			return command.Fail("native commands are not available in this context\n"), nil
		}
		// A large stdout goes to the file the cut notice names as it
		// comes, instead of through memory whole (issue 30).
		return b.opts.Exec.Execute(command.WithSpill(ctx, b.spillFile), cmd, cwd)
	case router.FamilyBuiltin:
		if b.opts.Agent != nil {
			return b.opts.Agent.Run(ctx, cmd), nil
		}
	}
	if h := b.opts.Handlers[route.Family]; h != nil {
		return h.Run(ctx, cmd), nil
	}
	return notAvailable(route), nil
}

// notAvailable answers a command whose layer is not wired in this build or context.
func notAvailable(route router.Route) command.Result {
	what := map[router.Family]string{
		router.FamilyBuiltin:     "Agent Shell commands are",
		router.FamilyTask:        "sub-agents (task:<type>) are",
		router.FamilySkill:       "skill management (skill:<action>) is",
		router.FamilySearch:      "command:search is",
		router.FamilyMCP:         "MCP tools (mcp:<server>:<tool>) are",
		router.FamilySkillScript: "skill scripts (skill:<skill>:<script>) are",
	}[route.Family]
	return command.Fail(route.Name + ": not available: " + what + " not available in this context. Do this step with other commands.\n")
}

// AllowPermanent adds path (~ and relative paths resolved against cwd) to
// the sandbox's permanent whitelist: it is written to sandbox.json and
// granted to the running session at once.
func (b *Bash) AllowPermanent(path, cwd string) error {
	if b.opts.Whitelist == nil {
		return errors.New("allow permanently: no sandbox manager is configured, so there is no whitelist to update")
	}
	p, err := absPath(path, cwd, b.opts.Home)
	if err != nil {
		return err
	}
	if err := b.opts.Whitelist.AddPermanentWhitelist(p); err != nil {
		return fmt.Errorf("allow %s permanently: %w", p, err)
	}
	return nil
}

func absPath(path, cwd, home string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", errors.New("allow: the path is empty")
	}
	if home != "" {
		path = config.ExpandHome(path, home)
	}
	if !filepath.IsAbs(path) {
		if cwd == "" {
			return "", fmt.Errorf("allow: %q is relative and no directory was given to resolve it", path)
		}
		path = filepath.Join(cwd, path)
	}
	return filepath.Clean(path), nil
}

// bashCallRe matches a whole tool call written as the command:
// Bash(command="ls -la"), Bash(command: 'ls'), Bash("ls"), in any case
// (bash(command="ls") is the same slip; `bash ls` is the wrapper command).
// Compiled on first use, not at every start.
var bashCallRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?si)^\s*` + Name + `\s*\(\s*(?:command\s*[=:]\s*)?(?:"((?:[^"\\]|\\.)*)"|'([^']*)')\s*(?:,[^()]*)?\)\s*;?\s*$`)
})

// toolCallAsCommand answers a command line that is the tool call itself
// (Bash(command="ls -la"), Bash ls, Bash) without running it: bash would
// only report a syntax error or an unknown program, and the model needs to
// hear that the tool takes the inner command alone.
func toolCallAsCommand(cmd string) (Result, bool) {
	word := router.FirstWord(cmd)
	var inner string
	switch {
	case bashCallRe().MatchString(cmd):
		m := bashCallRe().FindStringSubmatch(cmd)
		inner = m[2]
		if m[1] != "" {
			if u, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
				inner = u
			} else {
				inner = m[1]
			}
		}
	case hasPrefixFold(strings.TrimSpace(cmd), Name+"({") && strings.HasSuffix(strings.TrimSpace(cmd), "})"):
		t := strings.TrimSpace(cmd)
		if in, err := DecodeInput(json.RawMessage(t[len(Name)+1 : len(t)-1])); err == nil {
			inner = in.Command
		}
	case word == Name:
		inner = router.Rest(cmd)
	case hasPrefixFold(word, Name+"("):
	default:
		return Result{}, false
	}
	inner = strings.TrimSpace(inner)
	msg := hintTag + " " + Name + " is the tool; pass only the inner command"
	if inner != "" {
		msg += ": `" + inner + "`"
	} else {
		msg += ` as "command", for example {"command": "ls -la"}`
	}
	return Result{Output: msg, IsError: true, Message: Name + " is the tool; pass only the inner command",
		Facts: Facts{FailureCategory: FailureInvalidUsage}}, true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
