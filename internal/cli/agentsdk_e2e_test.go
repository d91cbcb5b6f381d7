package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// sdkCase is the [case:NAME] marker the Node suite puts in its prompts.
var sdkCase = regexp.MustCompile(`\[case:([a-z-]+)\]`)

// agentSDKModel is the scripted model behind the Node suite: it answers by
// the case named in the conversation's first prompt, and after a tool
// call with what the tool returned, so that the suite can check what the
// model was told.
func agentSDKModel(req *llmtest.Request) llmtest.Turn {
	if strings.HasPrefix(req.System, "You are REVIEWER-XYZ") {
		// The custom sub-agent of the agents case: its own system prompt.
		return llmtest.TextTurn("reviewed under REVIEWER-XYZ")
	}
	m := sdkCase.FindStringSubmatch(req.FirstUserText())
	if m == nil {
		return llmtest.TextTurn("no case in the prompt")
	}
	results := req.LastToolResults()
	toolSays := ""
	if len(results) > 0 {
		toolSays = results[0].Content
	}
	switch m[1] {
	case "text":
		return llmtest.TextTurn("hello from synapse")
	case "tool", "partial":
		if toolSays == "" {
			return llmtest.Turn{Text: "Running it.", ToolCalls: []llmtest.ToolCall{llmtest.BashCall("call_echo", "echo tool-output-42")}}
		}
		return llmtest.TextTurn("the command printed " + strings.TrimSpace(toolSays))
	case "multi":
		n := 0
		for _, msg := range req.Messages {
			if msg.Role == "user" && strings.Contains(msg.Text, "[case:multi]") {
				n++
			}
		}
		return llmtest.TextTurn("answer to prompt " + string(rune('0'+n)))
	case "resume":
		if strings.Contains(req.LastUserText(), "what number") {
			if strings.Contains(req.FirstUserText(), "remember 7") {
				return llmtest.TextTurn("you said 7")
			}
			return llmtest.TextTurn("I do not know")
		}
		return llmtest.TextTurn("noted")
	case "interrupt":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_sleep", "sleep 30"))
		}
		return llmtest.TextTurn("the sleep ended: " + toolSays)
	case "deny":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_touch", "touch denied-marker.txt"))
		}
		return llmtest.TextTurn("told: " + toolSays)
	case "hook":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_rm", "touch hook-marker.txt"))
		}
		return llmtest.TextTurn("told: " + toolSays)
	case "allow":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_allow", "touch allowed-marker.txt"))
		}
		return llmtest.TextTurn("done")
	case "rewrite":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_rewrite", "touch rewrite-marker.txt"))
		}
		return llmtest.TextTurn("told: " + toolSays)
	case "system":
		if strings.Contains(req.System, "XYZZY-ORACLE") {
			return llmtest.TextTurn("the system prompt reached the model")
		}
		return llmtest.TextTurn("no custom system prompt")
	case "plan":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_write", "write plan-file.txt hello"))
		}
		return llmtest.TextTurn("told: " + toolSays)
	case "error":
		return llmtest.ErrorTurn(400, "the test model refuses this request")
	case "hookask":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_hookask", "touch hookask-marker.txt"))
		}
		return llmtest.TextTurn("told: " + toolSays)
	case "agents":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_task", `task:reviewer -p "review main.go" -d "review"`))
		}
		return llmtest.TextTurn("told: " + toolSays)
	case "mcpset":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_echo", "mcp:echo:echo --text=set-servers-42"))
		}
		return llmtest.TextTurn("told: " + toolSays)
	case "sdkmcp":
		if toolSays == "" {
			return llmtest.ToolTurn(llmtest.BashCall("call_add", "mcp:calc:add --a=1 --b=2"))
		}
		return llmtest.TextTurn("told: " + toolSays)
	}
	return llmtest.TextTurn("unknown case " + m[1])
}

// TestAgentSDK drives synapse with the official Claude Agent SDK
// (@anthropic-ai/claude-agent-sdk, testdata/npm/agentsdk): the Node suite
// there (node --test) points pathToClaudeCodeExecutable at the built
// binary and the model at a scripted llmtest server, and checks text, tool
// calls, multi-turn input, resume, partial messages, interrupt, canUseTool
// (deny, allow, allow with another command), a PreToolUse hook callback
// that blocks, one that asks and changes the command, custom agents
// (task:<name>), setMcpServers,
// the system prompt, setPermissionMode('plan'), error results, and that
// every message satisfies the SDK's types (tsc --noEmit).
func TestAgentSDK(t *testing.T) {
	nm := testutil.NodeModules(t, "agentsdk", "@anthropic-ai/claude-agent-sdk")
	srv := llmtest.New(t)
	srv.Handle(agentSDKModel)
	home := t.TempDir()
	work := t.TempDir()
	suite := filepath.Join(filepath.Dir(nm), "sdk.test.mjs")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "--test-concurrency=1", suite)
	cmd.Dir = filepath.Dir(nm)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SYNAPSE_HOME=" + filepath.Join(home, ".synapse"), "LC_ALL=C",
		"SYNAPSE_MODEL=claude-sonnet-4-5", "SYNAPSE_BIN=" + synapseBin, "SDK_WORK_DIR=" + work, "SDK_TMP=" + t.TempDir(),
		"CI=" + os.Getenv("CI"), "MCP_TEST_SERVER=" + mcpTestServer(t),
	}, srv.AnthropicEnv()...)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test output:\n%s", out)
	if err != nil {
		t.Fatalf("the Agent SDK suite failed: %v", err)
	}
	// Every case ran and passed: none skipped, none left as todo.
	for _, want := range []string{"# fail 0", "# skipped 0", "# todo 0", "# cancelled 0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the suite's summary lacks %q", want)
		}
	}
}
