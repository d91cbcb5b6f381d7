package acp

import (
	"cmp"
	"context"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	sessions "github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// option is the config option id of opts, failing the test when it is
// missing or not a select; its current value and offered values.
func option(t *testing.T, opts []sdk.SessionConfigOption, id string) (current string, values []string, o *sdk.SessionConfigOptionSelect) {
	t.Helper()
	for _, c := range opts {
		if c.Select != nil && string(c.Select.Id) == id {
			if c.Select.Options.Ungrouped == nil {
				t.Fatalf("option %s has no ungrouped values: %+v", id, c.Select)
			}
			for _, v := range *c.Select.Options.Ungrouped {
				values = append(values, string(v.Value))
			}
			return string(c.Select.CurrentValue), values, c.Select
		}
	}
	t.Fatalf("no config option %q in %+v", id, opts)
	return "", nil, nil
}

func (w *world) setOption(id sdk.SessionId, config, value string) (sdk.SetSessionConfigOptionResponse, error) {
	return w.conn.SetSessionConfigOption(context.Background(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: sdk.SessionConfigId(config), Value: sdk.SessionConfigValueId(value)}})
}

// lastModel is the model of the fake server's last request.
func (w *world) lastModel(t *testing.T) string {
	t.Helper()
	req, ok := w.srv.LastRequest()
	if !ok {
		t.Fatal("the model server got no request")
	}
	return req.Model
}

// The model is a session config option (category model) next to the mode:
// set_config_option switches the model the next prompt is sent with,
// answers with both options and tells the client; a model not offered is
// refused with the list; session/set_model does the same switch; a loaded
// session reports the model it uses (the configured one: a switch lasts
// for the session's life in this server, as /model in the REPL).
func TestModelConfigOption(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.TextTurn("one"), llmtest.TextTurn("two"), llmtest.TextTurn("three"), llmtest.TextTurn("four"), llmtest.TextTurn("five"))
	res, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.SessionId
	if len(res.ConfigOptions) != 2 || res.ConfigOptions[0].Select == nil || res.ConfigOptions[0].Select.Id != modeConfigID {
		t.Errorf("config options = %+v, want the mode then the model", res.ConfigOptions)
	}
	anthropic := []string{"claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"}
	cur, values, o := option(t, res.ConfigOptions, modelConfigID)
	if cur != "claude-sonnet-4-5" || strings.Join(values, ",") != strings.Join(anthropic, ",") ||
		o.Category == nil || *o.Category != sdk.SessionConfigOptionCategoryModel {
		t.Errorf("model option: current %q, values %v, category %v; want claude-sonnet-4-5 of %v, category model", cur, values, o.Category, anthropic)
	}
	if d := (*o.Options.Ungrouped)[0].Description; d == nil || !strings.Contains(*d, "configured") {
		t.Errorf("the configured model's description = %v", d)
	}
	if m := res.Models; m == nil || m.CurrentModelId != "claude-sonnet-4-5" || len(m.AvailableModels) != len(anthropic) || m.AvailableModels[2].ModelId != "claude-haiku-4-5" {
		t.Errorf("models = %+v, want the config option's list", res.Models)
	}
	w.prompt(t, id, "first")
	if m := w.lastModel(t); m != "claude-sonnet-4-5" {
		t.Errorf("first request's model = %q", m)
	}

	set, err := w.setOption(id, modelConfigID, "claude-haiku-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if cur, _, _ := option(t, set.ConfigOptions, modelConfigID); cur != "claude-haiku-4-5" {
		t.Errorf("after the switch the option says %q", cur)
	}
	if mode, _, _ := option(t, set.ConfigOptions, modeConfigID); mode != "default" {
		t.Errorf("the model switch changed the mode to %q", mode)
	}
	var updates []string
	for _, u := range w.cl.snapshot() {
		if u.ConfigOptionUpdate != nil {
			cur, _, _ := option(t, u.ConfigOptionUpdate.ConfigOptions, modelConfigID)
			updates = append(updates, cur)
		}
	}
	if strings.Join(updates, ",") != "claude-haiku-4-5" {
		t.Errorf("config_option_update models = %v, want one with claude-haiku-4-5", updates)
	}
	w.prompt(t, id, "second")
	if m := w.lastModel(t); m != "claude-haiku-4-5" {
		t.Errorf("the request after the switch went with %q, want claude-haiku-4-5", m)
	}

	// The mode switches alone; the model stays.
	set, err = w.setOption(id, modeConfigID, "plan")
	if err != nil {
		t.Fatal(err)
	}
	mode, _, _ := option(t, set.ConfigOptions, modeConfigID)
	model, _, _ := option(t, set.ConfigOptions, modelConfigID)
	if mode != "plan" || model != "claude-haiku-4-5" {
		t.Errorf("after the mode switch: mode %q, model %q", mode, model)
	}

	for _, bad := range []string{"gpt-5", "claude-3-opus", ""} {
		_, err = w.setOption(id, modelConfigID, bad)
		if err == nil || !strings.Contains(err.Error(), `"code":-32602`) || !strings.Contains(err.Error(), strings.Join(anthropic, ", ")) {
			t.Errorf("model %q: %v; want invalid params listing %v", bad, err, anthropic)
		}
	}
	if _, err := w.conn.UnstableSetSessionModel(context.Background(), sdk.UnstableSetSessionModelRequest{SessionId: id, ModelId: "nope"}); err == nil || !strings.Contains(err.Error(), "claude-opus-4-5") {
		t.Errorf("set_model nope: %v", err)
	}
	w.prompt(t, id, "third")
	if m := w.lastModel(t); m != "claude-haiku-4-5" {
		t.Errorf("after refused switches the request went with %q", m)
	}

	if _, err := w.conn.UnstableSetSessionModel(context.Background(), sdk.UnstableSetSessionModelRequest{SessionId: id, ModelId: "claude-opus-4-5"}); err != nil {
		t.Fatal(err)
	}
	ups := w.cl.snapshot()
	if u := ups[len(ups)-1].ConfigOptionUpdate; u == nil {
		t.Errorf("set_model sent no config_option_update: last update %+v", ups[len(ups)-1])
	} else if cur, _, _ := option(t, u.ConfigOptions, modelConfigID); cur != "claude-opus-4-5" {
		t.Errorf("set_model's config_option_update says %q", cur)
	}
	w.prompt(t, id, "fourth")
	if m := w.lastModel(t); m != "claude-opus-4-5" {
		t.Errorf("the request after set_model went with %q", m)
	}

	// The editor restarts and loads the session: it runs on the configured
	// model, and says so.
	w.cl = &client{}
	w.connect(t)
	load, err := w.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: w.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if cur, _, _ := option(t, load.ConfigOptions, modelConfigID); cur != "claude-sonnet-4-5" || load.Models == nil || load.Models.CurrentModelId != "claude-sonnet-4-5" {
		t.Errorf("loaded session: option %q, models %+v", cur, load.Models)
	}
	w.prompt(t, id, "fifth")
	if m := w.lastModel(t); m != "claude-sonnet-4-5" {
		t.Errorf("the loaded session's request went with %q", m)
	}
}

// The offered models: the configured one first, then the current models of
// its provider, then those of the other provider only when it is
// configured (the switch path reaches it); a switch to one runs it there.
func TestModelChoices(t *testing.T) {
	testutil.RequireBwrap(t)
	anthropic := "claude-sonnet-4-5,claude-opus-4-5,claude-haiku-4-5"
	openai := "gpt-5,gpt-5-mini,gpt-5-nano"
	for _, tc := range []struct {
		name   string
		env    func(w *world) map[string]string
		want   string
		to     string // a model to switch to and prompt with
		format string // the wire format that request must use
		id     string // the model id that request must name; "" means to
	}{
		{name: "anthropic only", want: anthropic},
		{name: "a dated configured model", env: func(*world) map[string]string {
			return map[string]string{"SYNAPSE_MODEL": "claude-sonnet-4-5-20250929"}
		}, want: "claude-sonnet-4-5-20250929," + anthropic, to: "claude-sonnet-4-5", format: llmtest.FormatAnthropic},
		{name: "both providers", env: func(w *world) map[string]string {
			return map[string]string{"OPENAI_BASE_URL": w.srv.OpenAIBaseURL(), "OPENAI_API_KEY": "llmtest-key"}
		}, want: anthropic + "," + openai, to: "gpt-5-mini", format: llmtest.FormatOpenAI},
		{name: "openai start", env: func(w *world) map[string]string {
			return map[string]string{"SYNAPSE_PROVIDER": "openai", "SYNAPSE_MODEL": "gpt-4.1", "OPENAI_BASE_URL": w.srv.OpenAIBaseURL(),
				"OPENAI_API_KEY": "llmtest-key", "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
		}, want: "gpt-4.1," + openai, to: "gpt-5", format: llmtest.FormatOpenAI},
		{name: "bedrock start: the Claude models, on Bedrock", env: func(w *world) map[string]string {
			env := map[string]string{"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
			for _, kv := range w.srv.BedrockEnv() {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			return env
		}, want: anthropic, to: "claude-opus-4-5", format: llmtest.FormatBedrock, id: "us.anthropic.claude-opus-4-5-20251101-v1:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, llmtest.TextTurn("ok"))
			if tc.env != nil {
				for k, v := range tc.env(w) {
					if v == "" {
						delete(w.env, k)
					} else {
						w.env[k] = v
					}
				}
				w.connect(t)
			}
			res, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w.proj, McpServers: []sdk.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			cur, values, _ := option(t, res.ConfigOptions, modelConfigID)
			if got := strings.Join(values, ","); got != tc.want || cur != values[0] {
				t.Errorf("models %s (current %s), want %s with the first current", got, cur, tc.want)
			}
			if tc.to == "" {
				return
			}
			if _, err := w.setOption(res.SessionId, modelConfigID, tc.to); err != nil {
				t.Fatal(err)
			}
			w.prompt(t, res.SessionId, "hi")
			req, _ := w.srv.LastRequest()
			if id := cmp.Or(tc.id, tc.to); req.Model != id || req.Format != tc.format {
				t.Errorf("request after the switch: %s %s, want %s %s", req.Format, req.Model, tc.format, id)
			}
		})
	}
}

// Every offered model is one the built-in price list knows (so /cost and
// synapse sessions price it): a rename there shows here.
func TestKnownModelsArePriced(t *testing.T) {
	prices := sessions.DefaultPricing()
	for _, k := range knownModels {
		if _, ok := prices[k.model]; !ok {
			t.Errorf("%s (%s) is not in session.DefaultPricing", k.model, k.provider)
		}
	}
}
