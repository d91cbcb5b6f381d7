package acp

import (
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/config"
)

// modelConfigID is the session's model as a session config option
// (category model): the editor's model picker.
const modelConfigID = "model"

// knownModels are each provider's current models (all priced in
// session.DefaultPricing), offered after the configured one. Older
// generations still work through --model, SYNAPSE_MODEL or settings.json;
// the picker keeps to the ones worth choosing today.
var knownModels = []struct{ provider, model string }{
	{config.ProviderAnthropic, "claude-sonnet-4-5"},
	{config.ProviderAnthropic, "claude-opus-4-5"},
	{config.ProviderAnthropic, "claude-haiku-4-5"},
	{config.ProviderOpenAI, "gpt-5"},
	{config.ProviderOpenAI, "gpt-5-mini"},
	{config.ProviderOpenAI, "gpt-5-nano"},
	{config.ProviderGemini, "gemini-2.5-pro"},
	{config.ProviderGemini, "gemini-2.5-flash"},
}

// modelChoice is one model the session may switch to.
type modelChoice struct {
	id, provider string
	configured   bool // the model the session started with (--model, SYNAPSE_MODEL, settings.json)
}

// offerModels is the session's model list, made once when it opens: the
// configured model first, then the known models of its provider, then
// those of another provider when the switch path can reach it (that
// provider is configured). A model the switch would refuse is left out.
func (s *session) offerModels() {
	start, err := s.g.ModelProvider("")
	if err != nil {
		return
	}
	list := []modelChoice{{id: s.g.Model, provider: start, configured: true}}
	seen := map[string]bool{s.g.Model: true}
	// On Bedrock or Vertex, the Claude models are served there.
	served := func(provider string) string {
		if provider == config.ProviderAnthropic && (start == config.ProviderBedrock || start == config.ProviderVertex) {
			return start
		}
		return provider
	}
	add := func(same bool) {
		for _, k := range knownModels {
			if seen[k.model] || (served(k.provider) == start) != same {
				continue
			}
			p, err := s.g.ModelProvider(k.model)
			if err != nil || p != served(k.provider) {
				continue
			}
			seen[k.model] = true
			list = append(list, modelChoice{id: k.model, provider: p})
		}
	}
	add(true)
	add(false)
	s.models = list
}

// currentModel is the model the session's next request is sent with.
func (s *session) currentModel() string { return s.g.Runner.Model() }

// modelIDs are the offered models' ids, for an error that lists them.
func (s *session) modelIDs() []string {
	ids := make([]string, 0, len(s.models))
	for _, m := range s.models {
		ids = append(ids, m.id)
	}
	return ids
}

func (m modelChoice) description() string {
	d := providerName(m.provider)
	if m.configured {
		d += "; the configured model (--model, SYNAPSE_MODEL or settings.json)"
	}
	return d
}

func providerName(p string) string {
	switch p {
	case config.ProviderAnthropic:
		return "Anthropic"
	case config.ProviderOpenAI:
		return "OpenAI"
	case config.ProviderGemini:
		return "Google Gemini"
	case config.ProviderBedrock:
		return "Amazon Bedrock"
	case config.ProviderVertex:
		return "Google Vertex AI"
	}
	return p
}

// modelOption is the model as a session config option.
func (s *session) modelOption() sdk.SessionConfigOption {
	opts := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(s.models))
	for _, m := range s.models {
		d := m.description()
		opts = append(opts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.id), Name: m.id, Description: &d})
	}
	o := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(s.currentModel()), sdk.SessionConfigSelectOptions{Ungrouped: &opts})
	o.Select.Id = modelConfigID
	o.Select.Name = "Model"
	o.Select.Description = sdk.Ptr("The model the next request is sent with")
	o.Select.Category = sdk.Ptr(sdk.SessionConfigOptionCategoryModel)
	return o
}

// modelState is the model in the (unstable) models form of the session
// responses, the same list as the config option.
func (s *session) modelState() *sdk.SessionModelState {
	st := &sdk.SessionModelState{CurrentModelId: sdk.ModelId(s.currentModel()), AvailableModels: []sdk.ModelInfo{}}
	for _, m := range s.models {
		d := m.description()
		st.AvailableModels = append(st.AvailableModels, sdk.ModelInfo{ModelId: sdk.ModelId(m.id), Name: m.id, Description: &d})
	}
	return st
}

// switchModel is set_config_option of the model and session/set_model: a
// model of the list, switched the way the REPL's /model does (the provider
// follows the model); the next request is sent with it. The client is told
// by config_option_update (the protocol has no model update of its own).
func (s *session) switchModel(model string) error {
	if !slices.ContainsFunc(s.models, func(m modelChoice) bool { return m.id == model }) {
		return sdk.NewInvalidParams(fmt.Sprintf("model %q is not offered in this session: use one of %s", model, strings.Join(s.modelIDs(), ", ")))
	}
	if model == s.currentModel() {
		return nil
	}
	if err := s.g.SwitchModel(model); err != nil {
		return sdk.NewInvalidRequest(fmt.Sprintf("model %s: %v", model, err))
	}
	s.send(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions(), SessionUpdate: "config_option_update"}})
	return nil
}
