package session

import (
	"math"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
)

func TestDefaultPricing(t *testing.T) {
	p := DefaultPricing()
	million := llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	for _, tc := range []struct {
		model string
		want  float64 // one million tokens in and out
		ok    bool
	}{
		{"claude-sonnet-4-5", 18, true},
		{"claude-sonnet-4-5-20250929", 18, true},
		{"claude-opus-4-5-20251101", 30, true},
		{"claude-opus-4-1-20250805", 90, true},
		{"claude-haiku-4-5", 6, true},
		{"gpt-4o", 12.5, true},
		{"gpt-4o-mini-2024-07-18", 0.75, true},
		{"gpt-5-mini", 2.25, true},
		{"gpt-4.1-nano", 0.5, true},
		{"gemini-2.5-pro", 11.25, true},
		{"gemini-2.5-flash", 2.8, true},
		{"gemini-2.5-flash-lite-preview-09-2025", 0.5, true},
		{"llama3.1", 0, false},
	} {
		got, ok := p.Cost(tc.model, million)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: cost %v, %v; want %v, %v", tc.model, got, ok, tc.want, tc.ok)
		}
	}
	// Cache reads are cheaper than input for every built-in model.
	for name, pr := range p {
		if pr.Input <= 0 || pr.Output <= pr.Input || pr.CacheRead >= pr.Input {
			t.Errorf("%s: implausible price %+v", name, pr)
		}
	}
}

func TestPricingOverrides(t *testing.T) {
	base := DefaultPricing()
	got := base.WithOverrides(Pricing{"claude-sonnet-4-5": {Input: 1, Output: 2}, "my-local": {Input: 0.1, Output: 0.2}})
	if got["claude-sonnet-4-5"].Output != 2 || got["my-local"].Input != 0.1 || got["gpt-4o"].Input != 2.5 {
		t.Errorf("overrides not applied: %+v", got)
	}
	if base["claude-sonnet-4-5"].Output != 15 {
		t.Error("WithOverrides changed its receiver")
	}
	if got := base.WithOverrides(nil); len(got) != len(base) {
		t.Errorf("nil overrides: %d entries, want %d", len(got), len(base))
	}
}
