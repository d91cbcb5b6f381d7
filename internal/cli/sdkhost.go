package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/headless"
	"github.com/synapse-agent/synapse/internal/mcp"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// sdkHost answers the Agent SDK's control requests for one `synapse run`
// session: it wires headless.Control's handlers to the agent, the gate
// and the output.
type sdkHost struct {
	g          *app.Agent
	perm       *tool.Permissions
	out        *runOutput
	ctl        *headless.Control
	hostAsks   bool     // --permission-prompt-tool stdio
	sdkServers []string // the host's in-process MCP servers (--mcp-config type sdk, initialize)
	startModel string
	basePrompt string // the system prompt after the flags
	errw       io.Writer
}

func (h *sdkHost) handlers(turns *turnCancel) headless.Handlers {
	return headless.Handlers{
		Initialize:        h.initialize,
		Interrupt:         turns.interrupt,
		SetPermissionMode: h.setMode,
		SetModel:          h.setModel,
		MCPStatus:         h.mcpStatus,
		CallFor:           h.out.callFor,
		Denied:            h.out.denied,
	}
}

// notSupported reports what the host set up that Synapse does not do, on
// stderr and as a warning event.
func (h *sdkHost) notSupported(what string) {
	fmt.Fprintln(h.errw, "synapse: note:", textutil.Sanitize(what))
	h.out.warn(errors.New(what))
}

func (h *sdkHost) initialize(in headless.Init) (map[string]any, error) {
	if in.SystemPrompt != "" || in.AppendSystemPrompt != "" {
		p := h.basePrompt
		if in.SystemPrompt != "" {
			p = in.SystemPrompt
		}
		if in.AppendSystemPrompt != "" {
			p += "\n\n" + in.AppendSystemPrompt
		}
		h.g.Runner.SetSystemPrompt(p)
	}
	resp := map[string]any{
		"commands":                []any{},
		"agents":                  agentInfos(),
		"output_style":            "default",
		"available_output_styles": []string{"default"},
		"models":                  []any{map[string]any{"value": h.g.Runner.Model(), "displayName": h.g.Runner.Model(), "description": "the session's model"}},
		"account":                 map[string]any{},
		"claude_code_version":     Version,
	}
	if len(in.Hooks) > 0 {
		cfg, notes := h.ctl.HookConfig(in.HookMatchers)
		for _, n := range notes {
			h.notSupported(n)
		}
		applied := len(cfg) > 0 && h.g.Hooks != nil
		if applied {
			h.g.Hooks.AddHooks(cfg)
		}
		resp["hooks_applied"] = applied
	}
	if len(in.Agents) > 0 {
		slices.Sort(in.Agents)
		h.notSupported("the host's agent definitions (" + strings.Join(in.Agents, ", ") + ") are not used: synapse's sub-agents are task:explore, task:general and task:skill:search")
	}
	if len(in.MCPServers) > 0 {
		slices.Sort(in.MCPServers)
		h.notSupported("MCP servers sent in initialize (" + strings.Join(in.MCPServers, ", ") + ") are not started: synapse reads them from --mcp-config (the SDK's default delivery, mcpServersDelivery 'argv')")
		resp["mcp_servers_applied"] = false
	}
	// The host's in-process servers are MCP servers of the session, reached
	// through mcp_message: add those named here (the SDK names them only
	// here; --mcp-config's "type":"sdk" entries are added at start) and
	// connect them now that the host reads our requests.
	if m := h.mcp(); m != nil && h.ctl != nil {
		for _, s := range in.SDKMCPServers {
			if h.served(s) {
				continue
			}
			if err := m.Add(mcp.ServerConfig{Name: s, Type: mcp.KindHost, File: "initialize", Host: h.ctl}); err != nil {
				h.notSupported("the host's in-process MCP server " + s + " is not served: " + err.Error())
			}
		}
		var ours []string
		for _, st := range m.Status() {
			if st.Kind == mcp.KindHost {
				ours = append(ours, st.Name)
			}
		}
		m.Prefetch(ours...)
	}
	for _, s := range in.SDKMCPServers {
		if !h.served(s) && !slices.Contains(h.sdkServers, s) {
			h.sdkServers = append(h.sdkServers, s)
		}
	}
	return resp, nil
}

// setMode switches the permission mode (set_permission_mode, setPermissionMode()).
func (h *sdkHost) setMode(name string) error {
	m, err := headless.ParseMode(name, h.hostAsks)
	if err != nil {
		return err
	}
	if err := h.perm.SetMode(m.Mode); err != nil {
		return fmt.Errorf("permission mode %s: %w", name, err)
	}
	h.ctl.SetAsking(m.Ask)
	if m.Note != "" {
		fmt.Fprintln(h.errw, "synapse: note: permission mode", m.Note)
	}
	return nil
}

// setModel switches the model (set_model); "" and "default" go back to the
// session's first.
func (h *sdkHost) setModel(model string) error {
	if model == "" || model == "default" {
		model = h.startModel
	}
	if err := h.g.SwitchModel(model); err != nil {
		return err
	}
	h.out.setModel(model)
	return nil
}

// mcpStatus lists the MCP servers, the host's in-process ones as failed.
func (h *sdkHost) mcpStatus() []headless.MCPStatus {
	rows := mcpStatuses(h.g)
	for _, s := range h.sdkServers {
		if h.served(s) {
			continue
		}
		why := "in-process (SDK) MCP servers are served only in a stream-json session (--input-format stream-json)"
		rows = append(rows, headless.MCPStatus{Name: s, Status: "failed", Error: why, Source: "sdk"})
	}
	return rows
}

// served says whether the MCP manager serves the host's in-process server
// name (it was given in --mcp-config to a stream-json session).
func (h *sdkHost) served(name string) bool {
	m := h.mcp()
	if m == nil {
		return false
	}
	c, ok := m.Config(name)
	return ok && c.Host != nil
}

// mcp is the session's MCP manager (nil: none).
func (h *sdkHost) mcp() *mcp.Manager {
	if h.g.Extensions == nil {
		return nil
	}
	return h.g.Extensions.MCP
}

// apiKeySource is where the key comes from, as the SDK names it.
func apiKeySource(getenv func(string) string) string {
	if getenv("ANTHROPIC_API_KEY") != "" {
		return "ANTHROPIC_API_KEY"
	}
	return "none"
}

// skillNames are the installed skills (system/init's skills).
func skillNames(g *app.Agent) []string {
	var out []string
	if g.Extensions == nil || g.Extensions.Index == nil {
		return out
	}
	for _, s := range g.Extensions.Index.Skills() {
		out = append(out, s.Name)
	}
	return out
}

// taskTypes are the sub-agent types (system/init's agents), from the registry.
func taskTypes() []string {
	var out []string
	for _, n := range registry.Names(registry.FamilyTask) {
		out = append(out, strings.TrimPrefix(n, registry.FamilyTask))
	}
	return out
}

// agentInfos are the sub-agents for initialize's response.
func agentInfos() []any {
	out := []any{}
	for _, c := range registry.All() {
		if c.Family == registry.FamilyTask {
			out = append(out, map[string]any{"name": strings.TrimPrefix(c.Name, registry.FamilyTask), "description": c.Help})
		}
	}
	return out
}
