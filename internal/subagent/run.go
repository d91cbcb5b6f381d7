package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// runAgent runs a tool-using sub-agent to its final answer.
func (h *Handler) runAgent(ctx context.Context, trace agent.CallTrace, id string, req Request, provider llm.Provider, model string) outcome {
	if provider == nil {
		return outcome{err: errors.New("no model provider is configured for sub-agents")}
	}
	if h.opts.Workspace == nil {
		return outcome{err: errors.New("sub-agents cannot get a shell in this context")}
	}
	ws, err := h.opts.Workspace(ctx, req.Kind)
	if err != nil {
		return outcome{err: fmt.Errorf("cannot prepare the sub-agent's shell: %w", err)}
	}
	if ws.Tool == nil {
		return outcome{err: errors.New("cannot prepare the sub-agent's shell: the workspace has no tool")}
	}
	defer func() {
		if ws.Close != nil {
			_ = ws.Close() // the shell is gone either way; nothing the model can act on
		}
	}()
	todos := ws.Todos
	if todos == nil {
		todos = &todo.Store{}
	}
	maxTurns := req.MaxTurns
	if maxTurns <= 0 {
		maxTurns = h.opts.MaxTurns
	}

	var (
		tools atomic.Int64
		usage usageSum
	)
	onEvent := func(e agent.Event) {
		switch e.Kind {
		case agent.ToolStart:
			trace.Report(agent.Event{Kind: agent.TaskToolStart, TaskID: id, CallID: e.CallID, Command: e.Command, Route: e.Route})
		case agent.ToolEnd:
			tools.Add(1)
			trace.Report(agent.Event{Kind: agent.TaskToolEnd, TaskID: id, CallID: e.CallID, Command: e.Command, Route: e.Route,
				Result: e.Result, Duration: e.Duration})
		case agent.Usage:
			if e.Usage != nil {
				usage.add(*e.Usage)
				trace.AddUsage(*e.Usage, model)
			}
		}
	}
	runner, err := agent.New(agent.Options{
		Provider:     provider,
		Model:        model,
		SystemPrompt: req.Kind.systemPrompt(h.opts.Cwd, h.opts.SkillsDir),
		Cwd:          h.opts.Cwd,
		Tool:         tool.NewRestricted(ws.Tool, req.Kind.Exclude),
		Todos:        todos,
		MaxTurns:     maxTurns,
		// The sub-agent cannot run task:skill:search; the instruction would only mislead it.
		DisableSkillSearchInstruction: true,
		MaxTokens:                     h.opts.MaxTokens,
		Context:                       h.opts.Context,
		OnEvent:                       onEvent,
		Hooks:                         h.opts.Hooks,
	})
	if err != nil {
		return outcome{err: err}
	}
	res, runErr := runner.Run(context.WithValue(ctx, nestedKey{}, true), taskMessage(req))
	o := outcome{text: res.Text, toolCount: int(tools.Load()), usage: usage.get()}
	var limit *agent.LimitError
	switch {
	case runErr == nil:
		if strings.TrimSpace(o.text) == "" {
			o.err = errors.New("the sub-agent finished without an answer (its last message had no text). Retry with a clearer --prompt")
		}
	case errors.As(runErr, &limit):
		// Partial findings are worth returning with the failure.
		o.text = lastAnswer(runner.History())
		o.err = fmt.Errorf("the sub-agent stopped before finishing: %s", limitReason(limit, maxTurns))
	default:
		o.text = ""
		o.err = runErr
	}
	return o
}

func limitReason(e *agent.LimitError, maxTurns int) string {
	if e.Reason == agent.StopMaxTurns {
		return fmt.Sprintf("it used all %d model turns (--max-turns). Give it more turns or a narrower task", maxTurns)
	}
	return e.Message
}

// taskMessage is the sub-agent's first (and only) user message.
func taskMessage(req Request) string {
	return "Task: " + strings.TrimSpace(req.Description) + "\n\n" + req.Prompt
}

// lastAnswer is the text of the last assistant message that has any.
func lastAnswer(history []llm.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		if m.Role == llm.RoleAssistant && strings.TrimSpace(m.Text) != "" {
			return m.Text
		}
	}
	return ""
}

// usageSum adds usages from the sub-agent's event callback.
type usageSum struct {
	in, out, cacheRead, cacheWrite atomic.Int64
}

func (s *usageSum) add(u llm.Usage) {
	s.in.Add(u.InputTokens)
	s.out.Add(u.OutputTokens)
	s.cacheRead.Add(u.CacheReadTokens)
	s.cacheWrite.Add(u.CacheCreationTokens)
}

func (s *usageSum) get() llm.Usage {
	return llm.Usage{InputTokens: s.in.Load(), OutputTokens: s.out.Load(),
		CacheReadTokens: s.cacheRead.Load(), CacheCreationTokens: s.cacheWrite.Load()}
}

// SkillMatch is one skill:search result.
type SkillMatch struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// SkillSearchResult is the JSON skill:search prints.
type SkillSearchResult struct {
	MatchedSkills []SkillMatch `json:"matched_skills"`
}

// runSkillSearch asks the model once, without tools, which skills fit.
func (h *Handler) runSkillSearch(ctx context.Context, trace agent.CallTrace, req Request, provider llm.Provider, model string) outcome {
	index := ""
	if h.opts.SkillIndex != nil {
		index = strings.TrimSpace(h.opts.SkillIndex())
	}
	if index == "" {
		// Nothing installed: the answer is known without asking.
		return outcome{text: encodeMatches(nil)}
	}
	if provider == nil {
		return outcome{err: errors.New("no model provider is configured for sub-agents")}
	}
	maxTokens := h.opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 2048
	}
	msg := "# Installed skills\n\n" + index + "\n\n# Request\n\n" + req.Prompt
	resp, err := provider.Stream(ctx, llm.Request{
		Model:     model,
		System:    req.Kind.systemPrompt("", ""),
		Messages:  []llm.Message{{Role: llm.RoleUser, Text: msg}},
		MaxTokens: maxTokens,
	}, nil)
	if err != nil {
		return outcome{err: err}
	}
	m := model
	if resp.Model != "" {
		m = resp.Model
	}
	trace.AddUsage(resp.Usage, m)
	o := outcome{usage: resp.Usage}
	matches, err := parseMatches(resp.Message.Text)
	if err != nil {
		o.err = err
		return o
	}
	if h.opts.SkillExists != nil {
		kept := matches[:0]
		for _, s := range matches {
			if h.opts.SkillExists(s.Name) {
				kept = append(kept, s)
			}
		}
		matches = kept
	}
	o.text = encodeMatches(matches)
	return o
}

// parseMatches reads the model's JSON answer, tolerating a code fence or
// prose around the object.
func parseMatches(text string) ([]SkillMatch, error) {
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return nil, fmt.Errorf("skill search returned no JSON object (got %q); retry the search", textutil.Clip(text, 200))
	}
	var r struct {
		MatchedSkills *[]SkillMatch `json:"matched_skills"`
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), &r); err != nil {
		return nil, fmt.Errorf("skill search returned malformed JSON (%v); retry the search", err)
	}
	if r.MatchedSkills == nil {
		return nil, errors.New(`skill search returned JSON without "matched_skills"; retry the search`)
	}
	out := make([]SkillMatch, 0, len(*r.MatchedSkills))
	seen := map[string]bool{}
	for _, s := range *r.MatchedSkills {
		s.Name = strings.TrimSpace(s.Name)
		if s.Name == "" || seen[s.Name] {
			continue
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	return out, nil
}

func encodeMatches(m []SkillMatch) string {
	if m == nil {
		m = []SkillMatch{}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(SkillSearchResult{MatchedSkills: m}); err != nil {
		// Strings always marshal; keep the contract shape regardless.
		return `{"matched_skills":[]}`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

type nestedKey struct{}

// Nested reports whether ctx is a sub-agent's (its tool calls get it), so
// that a command that would start another sub-agent (skill:import --merge)
// can refuse: sub-agents never start sub-agents.
func Nested(ctx context.Context) bool {
	v, _ := ctx.Value(nestedKey{}).(bool)
	return v
}
