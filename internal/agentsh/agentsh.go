// Package agentsh implements the Agent Shell's built-in commands: read, write,
// edit, bash (a wrapper that runs a command in the shared shell session) and
// TodoWrite. Every command answers `-h` with a one-line usage and `--help`
// with a detailed Markdown page.
package agentsh

import (
	"context"
	"embed"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/jobs"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/todo"
)

// Executor runs native command lines in the agent's one shell session (the
// sandbox manager in production). The bash wrapper runs through it, and file
// commands resolve relative paths against its current directory.
type Executor interface {
	Execute(ctx context.Context, command, cwd string) (command.Result, error)
	Cwd() string
}

// PathChecker applies the sandbox policy to a path. write asks for write
// access. A nil PathChecker allows everything.
type PathChecker interface {
	CheckPath(path string, write bool) (blocked bool, reason, resource string)
}

// HostPather maps a path as sandboxed commands see it to the host file it
// is (the sandbox's private /tmp); a PathChecker that implements it gets
// every path through it before the check.
type HostPather interface {
	HostPath(path string) string
}

// DefaultTodoMaxContent is the longest todo content or activeForm, in characters.
const DefaultTodoMaxContent = config.DefaultTodoMaxContent

// Options configures a Shell.
type Options struct {
	Exec  Executor    // required by `bash`; its Cwd anchors relative paths
	Paths PathChecker // nil allows every path
	Todos *todo.Store // the agent's list; nil gives the Shell its own
	// Home replaces a leading ~ in paths (config.Config.UserHome).
	Home string
	// ReadLimit is read's default --limit (config.Config.ReadDefaultLimit).
	ReadLimit int
	// TodoMaxItems caps the todo list (config.Config.TodoMaxItems).
	TodoMaxItems int
	// TodoMaxContent caps each item's content and activeForm, in characters
	// (config.Config.TodoMaxContent).
	TodoMaxContent int
	// Jobs are the agent's background jobs (job:*); nil: none (sub-agents).
	Jobs *jobs.Table
}

// Shell runs Agent Shell commands. It holds no state of its own besides its
// options; it is safe for concurrent use when its Executor and store are.
type Shell struct {
	opts Options
}

// New returns a Shell; zero limits take their defaults.
func New(opts Options) *Shell {
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = config.DefaultReadLimit
	}
	if opts.TodoMaxItems <= 0 {
		opts.TodoMaxItems = config.DefaultTodoMaxItems
	}
	if opts.TodoMaxContent <= 0 {
		opts.TodoMaxContent = DefaultTodoMaxContent
	}
	if opts.Todos == nil {
		opts.Todos = &todo.Store{}
	}
	return &Shell{opts: opts}
}

// Todos returns the store TodoWrite updates.
func (s *Shell) Todos() *todo.Store { return s.opts.Todos }

// Run executes one Agent Shell command line (`read a.txt`, `bash ls`, ...).
// It satisfies command.Handler.
func (s *Shell) Run(ctx context.Context, line string) command.Result {
	name := router.FirstWord(line)
	rest := router.Rest(line)
	cmd, ok := commands[name]
	if !ok {
		return command.Fail(name + ": not an Agent Shell command (available: " + strings.Join(registry.Names(registry.FamilyBuiltin), ", ") + ")")
	}
	if err := ctx.Err(); err != nil {
		return interrupted(name)
	}
	if r, ok := s.help(cmd, rest); ok {
		return r
	}
	return cmd.run(s, ctx, rest)
}

// spec describes one command.
type spec struct {
	name string
	// helpAnywhere: -h/--help are recognised as any unquoted argument, not
	// only the first (commands without free text).
	helpAnywhere bool
	run          func(s *Shell, ctx context.Context, rest string) command.Result
}

// commands are the runners of the registry's builtins (a test ties the two).
var commands = map[string]*spec{
	registry.Read:      {name: registry.Read, helpAnywhere: true, run: (*Shell).read},
	registry.Write:     {name: registry.Write, run: (*Shell).write},
	registry.Edit:      {name: registry.Edit, run: (*Shell).edit},
	registry.Bash:      {name: registry.Bash, run: (*Shell).bash},
	registry.TodoWrite: {name: registry.TodoWrite, run: (*Shell).todoWrite},
	registry.JobStart:  {name: registry.JobStart, run: (*Shell).jobStart},
	registry.JobRead:   {name: registry.JobRead, helpAnywhere: true, run: (*Shell).jobRead},
	registry.JobWait:   {name: registry.JobWait, run: (*Shell).jobWait},
	registry.JobList:   {name: registry.JobList, helpAnywhere: true, run: (*Shell).jobList},
	registry.JobStop:   {name: registry.JobStop, helpAnywhere: true, run: (*Shell).jobStop},
}

// usage is name's one-line usage, from the registry.
func usage(name string) string {
	c, _ := registry.Lookup(name)
	return c.Usage
}

// Help returns the detailed Markdown help of an Agent Shell command ("" if unknown).
func Help(name string) string {
	// job:start's page is job-start.md: no colon in a file name of the module.
	b, err := helpFS.ReadFile("help/" + strings.ReplaceAll(name, ":", "-") + ".md")
	if err != nil {
		return ""
	}
	return string(b)
}

//go:embed help/*.md
var helpFS embed.FS

// help answers -h/--help when the flag is a whole, unquoted argument of the
// command itself: the first argument, or any argument for commands that take
// no free text. Quoted text ("use -h") is content, never a flag.
func (s *Shell) help(cmd *spec, rest string) (command.Result, bool) {
	first := router.FirstWord(rest)
	short, long := first == "-h", first == "--help"
	if !short && !long && cmd.helpAnywhere {
		if toks, err := tokenize(rest); err == nil {
			for _, t := range toks {
				sh, lo := isHelpToken(t)
				short, long = short || sh, long || lo
			}
		}
	}
	switch {
	case long:
		return command.OK(Help(cmd.name)), true
	case short:
		return command.OK(usage(cmd.name) + "\n"), true
	}
	return command.Result{}, false
}

// usageError is a failed result whose stderr names the problem and the usage.
func usageError(cmd, problem string) command.Result {
	return command.Usage(cmd + ": " + problem + "\n" + usage(cmd) + "\n")
}

func failf(cmd, msg string) command.Result { return command.Fail(cmd + ": " + msg + "\n") }

func interrupted(cmd string) command.Result {
	return command.Result{Stderr: cmd + ": interrupted\n", ExitCode: command.Interrupted}
}

// FileArg is the file a read, write or edit line names, as written (a
// view's location for the call); ok is false for other commands and for
// lines whose path does not parse.
func FileArg(line string) (path string, ok bool) {
	rest := router.Rest(line)
	switch router.FirstWord(line) {
	case registry.Read:
		toks, err := tokenize(rest)
		if err != nil {
			return "", false
		}
		for i := 0; i < len(toks); i++ {
			t := toks[i]
			if !t.Quoted && strings.HasPrefix(t.Value, "--") {
				if !strings.Contains(t.Value, "=") {
					i++ // --offset N, --limit N
				}
				continue
			}
			path = t.Value
			break
		}
	case registry.Write:
		p, _, err := splitQuotedPath(rest)
		if err != nil {
			return "", false
		}
		path = p
	case registry.Edit:
		toks, err := tokenize(rest)
		if err != nil {
			return "", false
		}
		for _, t := range toks {
			if t.Quoted || t.Value != "--all" {
				path = t.Value
				break
			}
		}
	default:
		return "", false
	}
	if path == "" || path == "-h" || path == "--help" {
		return "", false
	}
	return path, true
}

// cwd is the shell session's current directory, or the process's when there
// is no session.
func (s *Shell) cwd() string {
	if s.opts.Exec != nil {
		if d := s.opts.Exec.Cwd(); d != "" {
			return d
		}
	}
	d, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return d
}

// resolve expands ~ and anchors a relative path at the session's directory.
func (s *Shell) resolve(p string) string {
	if s.opts.Home != "" {
		p = config.ExpandHome(p, s.opts.Home)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cwd(), p)
	}
	p = filepath.Clean(p)
	if hp, ok := s.opts.Paths.(HostPather); ok {
		// /tmp/x in a command and in `read /tmp/x` must be the same file.
		p = hp.HostPath(p)
	}
	return p
}

// check applies the sandbox policy to path as named and to real, where it
// leads (realPath); the command then accesses exactly real, without
// following symlinks. ok is false with a blocked result when access is
// refused.
func (s *Shell) check(cmd, path, real string, write bool) (command.Result, bool) {
	if s.opts.Paths == nil {
		return command.Result{}, true
	}
	paths := []string{path}
	if real != path {
		paths = append(paths, real)
	}
	for _, p := range paths {
		if blocked, reason, resource := s.opts.Paths.CheckPath(p, write); blocked {
			if resource == "" {
				resource = p
			}
			access := "read"
			if write {
				access = "write"
			}
			msg := cmd + ": " + access + " access to " + resource + " is blocked by the sandbox policy"
			if reason != "" {
				msg += ": " + reason
			}
			return command.Result{
				Stderr: msg + "\n", ExitCode: 1,
				Blocked: true, BlockedReason: reason, BlockedResource: resource,
			}, false
		}
	}
	return command.Result{}, true
}

// plural formats n with its noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// WritePath is the file a write or edit line would change, as commands see
// it (~ expanded, anchored at the shell's directory), and whether a
// symbolic link on the way leads elsewhere (the write follows it). ok is
// false when the line is not a write or edit naming a file (it fails
// before writing anything). The ask permission mode checks it against its
// scratch list.
func (s *Shell) WritePath(line string) (path string, viaLink, ok bool) {
	if name := router.FirstWord(line); name != registry.Write && name != registry.Edit {
		return "", false, false
	}
	path, ok = FileArg(line)
	if !ok {
		return "", false, false
	}
	if s.opts.Home != "" {
		path = config.ExpandHome(path, s.opts.Home)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.cwd(), path)
	}
	path = filepath.Clean(path)
	host := s.resolve(path)
	return path, realPath(host) != host, true
}
