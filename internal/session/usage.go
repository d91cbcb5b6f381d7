package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
)

// MaxRounds is the default bound on the per-round usage entries kept for one
// session (Store.MaxRounds overrides it); totals keep
// counting past it. A long session must not grow its usage file without bound.
const MaxRounds = 100

// Round is the usage of one model request (or one sub-agent roll-up).
type Round struct {
	Time    time.Time `json:"time"`
	Model   string    `json:"model,omitempty"`
	Usage   llm.Usage `json:"usage"`
	CostUSD float64   `json:"costUSD,omitempty"`
	Priced  bool      `json:"priced,omitempty"`
}

// Usage is a session's token accounting.
type Usage struct {
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	Model               string  `json:"model,omitempty"`
	CostUSD             float64 `json:"costUSD,omitempty"`
	// Priced is true when at least one round had a price; CostUSD then sums
	// the priced rounds. UnpricedRounds counts the rest so a total is never
	// presented as complete when it is not.
	Priced         bool    `json:"priced,omitempty"`
	UnpricedRounds int     `json:"unpricedRounds,omitempty"`
	RoundCount     int     `json:"roundCount"`
	Rounds         []Round `json:"rounds,omitempty"`
}

// Totals returns the token totals as an llm.Usage.
func (u *Usage) Totals() llm.Usage {
	return llm.Usage{
		InputTokens:         u.InputTokens,
		OutputTokens:        u.OutputTokens,
		CacheReadTokens:     u.CacheReadTokens,
		CacheCreationTokens: u.CacheCreationTokens,
	}
}

// add records one round, keeping at most keep entries.
func (u *Usage) add(at time.Time, x llm.Usage, model string, p Pricing, keep int) {
	u.InputTokens += x.InputTokens
	u.OutputTokens += x.OutputTokens
	u.CacheReadTokens += x.CacheReadTokens
	u.CacheCreationTokens += x.CacheCreationTokens
	if model != "" {
		u.Model = model
	}
	r := Round{Time: at, Model: model, Usage: x}
	if cost, ok := p.Cost(model, x); ok {
		r.CostUSD, r.Priced = cost, true
		u.CostUSD += cost
		u.Priced = true
	} else {
		u.UnpricedRounds++
	}
	u.RoundCount++
	if over := len(u.Rounds) + 1 - keep; over > 0 {
		// Shift in place: the slice never reallocates past keep.
		n := copy(u.Rounds, u.Rounds[over:])
		u.Rounds = u.Rounds[:n]
	}
	u.Rounds = append(u.Rounds, r)
}

func (u *Usage) clone() *Usage {
	c := *u
	c.Rounds = append([]Round(nil), u.Rounds...)
	return &c
}

// Price is what one model costs, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Pricing maps model names to prices. A model matches an entry exactly, or
// else the longest entry that is a prefix of it (so "claude-sonnet-4-5"
// prices "claude-sonnet-4-5-20250929"); Amazon Bedrock's and Google Vertex
// AI's ids of a Claude model match as its Anthropic name (llm.ClaudeName).
type Pricing map[string]Price

// Cost returns the price of u under model, and whether the model is priced.
func (p Pricing) Cost(model string, u llm.Usage) (float64, bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	const perMillion = 1e6
	c := float64(u.InputTokens)*pr.Input +
		float64(u.OutputTokens)*pr.Output +
		float64(u.CacheReadTokens)*pr.CacheRead +
		float64(u.CacheCreationTokens)*pr.CacheWrite
	return c / perMillion, true
}

// Lookup returns the price of model and whether it has one.
func (p Pricing) Lookup(model string) (Price, bool) {
	if len(p) == 0 || model == "" {
		return Price{}, false
	}
	if pr, ok := p[model]; ok {
		return pr, true
	}
	// A cloud platform's id of a Claude model costs what the model costs.
	model = llm.ClaudeName(model)
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for name := range p {
		if name != "" && strings.HasPrefix(model, name) && len(name) > len(best) {
			best, found = name, true
		}
	}
	return p[best], found
}

// LoadPricing reads a pricing file: {"models": {"<model>": {"input": 3,
// "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}} in USD per million
// tokens; a bare map of models is accepted too. A missing file is no pricing
// and no error.
func LoadPricing(path string) (Pricing, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pricing file %s: %w", path, err)
	}
	bad := func(err error) error {
		return fmt.Errorf("pricing file %s is not valid ({\"models\": {\"<model>\": {\"input\": 3, \"output\": 15}}}, USD per million tokens); fix or delete it: %w", path, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, bad(err)
	}
	var p Pricing
	// With a "models" key the file is the wrapped form, mistakes inside it
	// included: read as a bare map it would price a model called "models".
	if models, ok := top["models"]; ok {
		if err := json.Unmarshal(models, &p); err != nil {
			return nil, bad(err)
		}
	} else if err := json.Unmarshal(data, &p); err != nil {
		return nil, bad(err)
	}
	for name, pr := range p {
		if pr.Input < 0 || pr.Output < 0 || pr.CacheRead < 0 || pr.CacheWrite < 0 {
			return nil, bad(fmt.Errorf("model %q has a negative price", name))
		}
	}
	return p, nil
}
