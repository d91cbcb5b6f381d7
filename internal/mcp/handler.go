package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/synapse-agent/synapse/internal/cmdline"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Handler runs `mcp:` command lines:
//
//	mcp:<server>:<tool> [args…]   call a tool (-h/--help: generated help)
//	mcp:<server>:@resources       list the server's resources and templates
//	mcp:<server>:@read <uri> …    read a resource (or a filled-in template)
//	mcp:<server>:@prompts         list the server's prompts
//	mcp:<server>:@prompt <name> … get a prompt
//	mcp:<server>                  list the server's tools (and say what else it has)
//	mcp:                          list the configured servers
type Handler struct {
	M *Manager
	// Timeout bounds one call when the server entry sets none (0: only ctx).
	Timeout time.Duration
	// OutputDir receives binary data servers send (blob resources, audio,
	// images), saved as files the model can reach: the agent's scratch
	// directory ("" means the system temp dir).
	OutputDir string
}

// Run implements command.Handler.
func (h *Handler) Run(ctx context.Context, line string) command.Result {
	line = strings.TrimSpace(line)
	head, rest := line, ""
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		head, rest = line[:i], line[i+1:]
	}
	if !strings.HasPrefix(head, "mcp:") && head != "mcp" {
		return command.Fail(fmt.Sprintf("not an MCP command: %q; use mcp:<server>:<tool> [args…]", head))
	}
	server, tool, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(head, "mcp"), ":"), ":")
	words, err := cmdline.SplitArgs(rest)
	if err != nil {
		return command.Fail(err.Error())
	}
	if server == "" {
		return h.listServers()
	}
	_, ok := h.M.Config(server)
	if !ok {
		return command.Fail(h.unknownServer(server))
	}
	if tool == "" {
		return h.listTools(ctx, server)
	}
	if strings.HasPrefix(tool, ExtraMark) {
		return h.runExtra(ctx, server, tool, words)
	}
	help := len(words) == 1 && (words[0] == "-h" || words[0] == "--help")
	tools, err := h.M.ServerTools(ctx, server)
	if err != nil {
		if help && ctx.Err() == nil {
			return command.OK(h.helpWhileDown(server, tool, err))
		}
		return h.failure(ctx, server, err)
	}
	var info *ToolInfo
	for i := range tools {
		if tools[i].Name == tool {
			info = &tools[i]
			break
		}
	}
	if info == nil {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		return command.Fail(fmt.Sprintf("MCP server %q has no tool %q. Its tools: %s\nRun mcp:%s:<tool> --help for a tool's arguments.", server, tool, strings.Join(names, ", "), server))
	}
	if help {
		return command.OK(ToolHelp(server, tool, info.Description, info.Schema))
	}
	args, err := BuildArgs(info.Schema, words)
	if err != nil {
		return command.Fail(fmt.Sprintf("%s: invalid arguments (nothing was sent):\n%v\nRun %s --help for the arguments.", head, err, head))
	}
	ctx, cancel := h.bound(ctx, server)
	defer cancel()
	res, err := h.M.Call(ctx, server, tool, args)
	if err != nil {
		return h.callFailure(ctx, server, head, err)
	}
	// A link names the command that reads it only when the server serves
	// resources.
	linksVia := ""
	if h.M.CachedResources(server).Declared {
		linksVia = server
	}
	out, images := FormatToolResult(res.CallToolResult, linksVia, h.saver())
	r := command.Result{Images: images}
	if res.Reconnected {
		r.Stderr = fmt.Sprintf("note: MCP server %q had stopped and was restarted before this call\n", server)
	}
	if res.IsError {
		r.Stderr += out
		r.ExitCode = 1
		return r
	}
	r.Stdout = out
	return r
}

// timeout is the bound of one call to server: its entry's "timeout", else
// the handler's (0: none).
func (h *Handler) timeout(server string) time.Duration {
	if cfg, ok := h.M.Config(server); ok && cfg.Timeout > 0 {
		return time.Duration(cfg.Timeout * float64(time.Second))
	}
	return h.Timeout
}

// callFailure is the result of a request that failed: a timeout exits 124
// (naming the restart of a stalled server), the rest as failure says.
func (h *Handler) callFailure(ctx context.Context, server, head string, err error) command.Result {
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		msg := fmt.Sprintf("%s timed out after %s", head, h.timeout(server))
		var stalled *StalledError
		if errors.As(err, &stalled) {
			msg += ": " + stalled.Error()
		}
		return command.Result{Stderr: msg, ExitCode: 124}
	}
	return h.failure(ctx, server, err)
}

// ReadOnly reports whether line only reads: a listing, a tool's help, a
// resource or prompt command (listing, reading a resource and getting a
// prompt change nothing by the protocol's definition), or a
// call of a tool its server annotates readOnlyHint (the ask permission mode
// runs those without asking). It connects to the server when needed; a
// server it cannot reach, an unknown tool or bad arguments are not
// read-only (the call will fail, or be asked about, as usual). Servers are
// the user's own or approved project ones, so their hints are trusted.
func (h *Handler) ReadOnly(ctx context.Context, line string) bool {
	line = strings.TrimSpace(line)
	head, rest := line, ""
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		head, rest = line[:i], line[i+1:]
	}
	server, tool, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(head, "mcp"), ":"), ":")
	if server == "" || tool == "" || strings.HasPrefix(tool, ExtraMark) {
		return true // the lists of servers and tools, resources and prompts
	}
	if words, err := cmdline.SplitArgs(rest); err == nil && len(words) == 1 && (words[0] == "-h" || words[0] == "--help") {
		return true
	}
	tools, err := h.M.ServerTools(ctx, server)
	if err != nil {
		return false
	}
	for _, t := range tools {
		if t.Name == tool {
			return t.ReadOnly
		}
	}
	return false
}

func (h *Handler) failure(ctx context.Context, server string, err error) command.Result {
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
		return command.Result{Stderr: "MCP call interrupted", ExitCode: command.Interrupted}
	}
	var down *ServerDownError
	var rejected *RejectedError
	if errors.As(err, &down) || errors.As(err, &rejected) {
		return command.Fail(err.Error())
	}
	return command.Fail(fmt.Sprintf("MCP server %q is not available: %v\nCheck its entry in %s; it is retried on the next call.", server, err, h.configFile(server)))
}

// helpWhileDown is --help of a tool whose server cannot be reached: what is
// known without it (the command form), that it is down and why, and when it
// is tried again. Asking for help is not a failure, so it is not one.
func (h *Handler) helpWhileDown(server, tool string, err error) string {
	cmd := "mcp:" + server + ":" + tool
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s [--<argument> <value> …]\n\n", cmd)
	fmt.Fprintf(&b, "MCP server %q is down, so the arguments of %s cannot be listed now.\n", server, tool)
	fmt.Fprintf(&b, "Why: %v\n\n", err)
	fmt.Fprintf(&b, "The server is started again on the next call. Once it runs, `%s --help` lists the arguments and `mcp:%s` the tools. If it keeps failing, check its entry in %s.\n", cmd, server, h.configFile(server))
	return b.String()
}

func (h *Handler) configFile(server string) string {
	if c, ok := h.M.Config(server); ok && c.File != "" {
		return c.File
	}
	return "the MCP configuration"
}

func (h *Handler) unknownServer(server string) string {
	names := h.M.Names()
	if len(names) == 0 {
		return fmt.Sprintf("Unknown MCP server %q: no MCP servers are configured. Add them to $SYNAPSE_HOME/mcp/mcp_servers.json or ./mcp_servers.json as {\"mcpServers\": {\"<name>\": {\"command\": …}}}.", server)
	}
	return fmt.Sprintf("Unknown MCP server %q. Configured servers: %s. Run mcp:<server> to list a server's tools.", server, strings.Join(names, ", "))
}

func (h *Handler) listServers() command.Result {
	st := h.M.Status()
	if len(st) == 0 {
		return command.OK("No MCP servers are configured.\n")
	}
	var b strings.Builder
	b.WriteString("MCP servers:\n")
	for _, s := range st {
		state := fmt.Sprintf("connected, %d tools", s.Tools)
		if rl := h.M.CachedResources(s.Name); rl.Declared {
			state += fmt.Sprintf(", %d resources, %d templates", len(rl.Resources), len(rl.Templates))
		}
		if pl := h.M.CachedPrompts(s.Name); pl.Declared {
			state += fmt.Sprintf(", %d prompts", len(pl.Prompts))
		}
		if !s.Connected {
			state = "not started yet: it starts on first use"
			if s.Err != "" {
				state = "not connected: " + s.Err
			}
		}
		fmt.Fprintf(&b, "  %s (%s) — %s\n", s.Name, s.Kind, state)
	}
	b.WriteString("Run mcp:<server> to list its tools (and what else it offers), mcp:<server>:<tool> --help for a tool's arguments.\n")
	return command.OK(b.String())
}

func (h *Handler) listTools(ctx context.Context, server string) command.Result {
	tools, err := h.M.ServerTools(ctx, server)
	if err != nil {
		return h.failure(ctx, server, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q has %d tools:\n", server, len(tools))
	width := 0
	for _, t := range tools {
		width = max(width, len(t.Command()))
	}
	for _, t := range tools {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, t.Command(), textutil.OneLine(t.Description, 120))
	}
	for _, n := range h.M.ListNotes(server) {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	fmt.Fprintf(&b, "Run mcp:%s:<tool> --help for a tool's arguments.\n", server)
	b.WriteString(h.extraSummary(server))
	return command.OK(b.String())
}
