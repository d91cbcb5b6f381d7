package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/synapse-agent/synapse/internal/mcp"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// claudeFlags are Claude Code's headless flags, which the Claude Agent SDK
// (and scripts written for `claude -p`) pass: those with a meaning here map
// onto Synapse's, the rest are accepted with a note on stderr.
type claudeFlags struct {
	print, verbose               bool
	maxTurns                     int
	allowed, disallowed          []string
	mcpConfig                    []string
	systemPrompt, appendPrompt   string
	promptTool                   string
	addDirs                      []string
	ignoredStrings               map[string]*string
	ignoredBools                 map[string]*bool
	ignoredArrays                map[string]*[]string
	dangerouslySkip              bool
	allowDangerouslySkip, replay bool
}

// noMeaning are Claude Code flags with no meaning here (by value kind):
// accepted, and named in a note on stderr.
var (
	noMeaningStrings = []string{"setting-sources", "fallback-model", "settings", "max-thinking-tokens", "max-budget-usd",
		"debug-file", "thinking", "thinking-display", "effort", "json-schema", "session-id", "agent", "agents", "betas",
		"resume-session-at", "task-budget", "sdk-url", "permission-prompts", "channels", "managed-settings", "initialize-fields",
		"project-config-root"}
	noMeaningBools  = []string{"debug-to-stderr", "include-hook-events", "no-session-persistence", "await-initialize", "strict-mcp-config", "debug"}
	noMeaningArrays = []string{"plugin-dir", "plugin-dir-no-mcp", "tools"}
)

func (c *claudeFlags) add(fl *pflag.FlagSet) {
	fl.BoolVarP(&c.print, "print", "p", false, "Claude Code's headless switch: run the prompt without a REPL (as synapse run)")
	fl.BoolVar(&c.verbose, "verbose", false, "accepted for Claude Code's -p --output-format stream-json; the stream is always complete")
	fl.IntVar(&c.maxTurns, "max-turns", 0, "stop after this many model turns (default: SYNAPSE_MAX_TOOL_ITERATIONS)")
	fl.StringArrayVar(&c.allowed, "allowedTools", nil, "tool patterns that run without asking (Bash, Bash(git diff:*), Read, Write, Edit, Task, mcp__server__tool; see docs/headless.md)")
	fl.StringArrayVar(&c.allowed, "allowed-tools", nil, "same as --allowedTools")
	fl.StringArrayVar(&c.disallowed, "disallowedTools", nil, "tool patterns that are refused without running (same patterns as --allowedTools)")
	fl.StringArrayVar(&c.disallowed, "disallowed-tools", nil, "same as --disallowedTools")
	fl.StringArrayVar(&c.mcpConfig, "mcp-config", nil, `MCP servers for this run: a JSON file or string {"mcpServers":{"name":{"command":…}}} (repeatable)`)
	fl.StringVar(&c.systemPrompt, "system-prompt", "", "replace the built-in system prompt")
	fl.StringVar(&c.appendPrompt, "append-system-prompt", "", "add this to the system prompt")
	fl.StringVar(&c.promptTool, "permission-prompt-tool", "", "stdio: permission questions go to the host as can_use_tool control requests (the Agent SDK's canUseTool)")
	fl.StringArrayVar(&c.addDirs, "add-dir", nil, "as --allow-path: also allow the sandbox to write this directory")
	fl.BoolVar(&c.dangerouslySkip, "dangerously-skip-permissions", false, "read as --permission-mode bypassPermissions (accept-edits; the sandbox stays on)")
	fl.BoolVar(&c.allowDangerouslySkip, "allow-dangerously-skip-permissions", false, "accepted; no meaning here")
	fl.BoolVar(&c.replay, "replay-user-messages", false, "accepted; no meaning here")
	c.ignoredStrings, c.ignoredBools, c.ignoredArrays = map[string]*string{}, map[string]*bool{}, map[string]*[]string{}
	for _, n := range noMeaningStrings {
		c.ignoredStrings[n] = fl.String(n, "", "Claude Code's; accepted, no meaning here")
		_ = fl.MarkHidden(n)
	}
	for _, n := range noMeaningBools {
		c.ignoredBools[n] = fl.Bool(n, false, "Claude Code's; accepted, no meaning here")
		_ = fl.MarkHidden(n)
	}
	for _, n := range noMeaningArrays {
		c.ignoredArrays[n] = fl.StringArray(n, nil, "Claude Code's; accepted, no meaning here")
		_ = fl.MarkHidden(n)
	}
	for _, n := range []string{"allowed-tools", "disallowed-tools", "allow-dangerously-skip-permissions", "replay-user-messages"} {
		_ = fl.MarkHidden(n)
	}
}

// headlessArgs reports whether a root command line asks for headless
// mode: -p/--print, or an --output-format or --input-format (the Agent SDK
// starts the executable with no subcommand and the latter two).
func headlessArgs(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "-p", "--print", "--output-format", "--input-format":
			return true
		}
	}
	return false
}

// noteFlags writes one line per flag given that has no meaning here, and
// per flag the root command does not know at all (accepted in headless
// mode, as Claude Code's may grow).
func noteFlags(w io.Writer, fl *pflag.FlagSet, args []string) {
	seen := map[string]bool{}
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if seen[name] {
			continue
		}
		seen[name] = true
		f := fl.Lookup(name)
		switch {
		case f == nil:
			fmt.Fprintf(w, "synapse: note: --%s is not a flag of synapse; ignored\n", textutil.Sanitize(name))
		case slices.Contains(noMeaningStrings, name) || slices.Contains(noMeaningBools, name) || slices.Contains(noMeaningArrays, name) ||
			name == "allow-dangerously-skip-permissions" || name == "replay-user-messages":
			fmt.Fprintf(w, "synapse: note: --%s (Claude Code's) has no meaning in synapse; ignored\n", name)
		}
	}
}

// mcpConfigs reads --mcp-config values: each a JSON file or a JSON string
// of Claude Code's shape {"mcpServers":{"name":{…}}}. Servers of type
// "sdk" live in the host's process and are offered in initialize
// instead; they are returned by name apart.
func mcpConfigs(values []string) (servers []mcp.ServerConfig, sdk []string, err error) {
	for _, v := range values {
		data := []byte(v)
		if t := strings.TrimSpace(v); !strings.HasPrefix(t, "{") {
			if data, err = os.ReadFile(t); err != nil {
				return nil, nil, fmt.Errorf("--mcp-config: %w", err)
			}
		}
		var file struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			return nil, nil, fmt.Errorf(`--mcp-config: not {"mcpServers":{…}}: %w`, err)
		}
		names := make([]string, 0, len(file.MCPServers))
		for n := range file.MCPServers {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			var c mcp.ServerConfig
			if err := json.Unmarshal(file.MCPServers[n], &c); err != nil {
				return nil, nil, fmt.Errorf("--mcp-config: server %s: %w", n, err)
			}
			if c.Type == "sdk" {
				sdk = append(sdk, n)
				continue
			}
			if c.Command == "" && c.URL == "" {
				return nil, nil, fmt.Errorf("--mcp-config: server %s has neither a command nor a url", n)
			}
			c.Name, c.File = n, "--mcp-config"
			servers = append(servers, c)
		}
	}
	return servers, sdk, nil
}

// errPromptTool: --permission-prompt-tool names something other than stdio.
var errPromptTool = errors.New("--permission-prompt-tool: only stdio (the control protocol's can_use_tool) is supported; an MCP tool as the prompt is not")
