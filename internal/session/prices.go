package session

// DefaultPricing is the built-in price list for current Anthropic, OpenAI
// and Gemini models, in US dollars per million tokens (the providers' published list
// prices), so costs show from the first run. Entries match by longest
// prefix, so dated snapshots ("claude-sonnet-4-5-20250929") are priced too.
// $SYNAPSE_HOME/pricing.json overrides or adds entries (see WithOverrides).
// A new map is returned on every call: callers may change it.
func DefaultPricing() Pricing {
	anthropic := func(in, out float64) Price {
		// Anthropic: a cache read is 0.1×, a 5-minute cache write 1.25× input.
		return Price{Input: in, Output: out, CacheRead: in / 10, CacheWrite: in * 1.25}
	}
	openai := func(in, out, cached float64) Price {
		// OpenAI bills cached prompt tokens at a discount and caching itself
		// costs nothing.
		return Price{Input: in, Output: out, CacheRead: cached}
	}
	gemini := func(in, out, cached float64) Price {
		// Gemini API list prices for prompts up to 200k tokens (Pro models
		// charge more beyond); implicit cache hits are billed at the cached
		// rate, with no storage charge. Thinking tokens are output.
		return Price{Input: in, Output: out, CacheRead: cached}
	}
	return Pricing{
		"claude-opus-4-5":   anthropic(5, 25),
		"claude-opus-4-1":   anthropic(15, 75),
		"claude-opus-4":     anthropic(15, 75),
		"claude-sonnet-4-5": anthropic(3, 15),
		"claude-sonnet-4":   anthropic(3, 15),
		"claude-3-7-sonnet": anthropic(3, 15),
		"claude-3-5-sonnet": anthropic(3, 15),
		"claude-haiku-4-5":  anthropic(1, 5),
		"claude-3-5-haiku":  anthropic(0.8, 4),
		"claude-3-haiku":    anthropic(0.25, 1.25),
		"claude-3-opus":     anthropic(15, 75),

		"gpt-5":        openai(1.25, 10, 0.125),
		"gpt-5-mini":   openai(0.25, 2, 0.025),
		"gpt-5-nano":   openai(0.05, 0.4, 0.005),
		"gpt-4.1":      openai(2, 8, 0.5),
		"gpt-4.1-mini": openai(0.4, 1.6, 0.1),
		"gpt-4.1-nano": openai(0.1, 0.4, 0.025),
		"gpt-4o":       openai(2.5, 10, 1.25),
		"gpt-4o-mini":  openai(0.15, 0.6, 0.075),
		"o3":           openai(2, 8, 0.5),
		"o3-mini":      openai(1.1, 4.4, 0.55),
		"o4-mini":      openai(1.1, 4.4, 0.275),
		"o1":           openai(15, 60, 7.5),

		"gemini-2.5-pro":        gemini(1.25, 10, 0.125),
		"gemini-2.5-flash":      gemini(0.3, 2.5, 0.03),
		"gemini-2.5-flash-lite": gemini(0.1, 0.4, 0.01),
		"gemini-3-pro-preview":  gemini(2, 12, 0.2),
	}
}

// WithOverrides returns p with the entries of over added or replacing its
// own (a pricing.json entry wins over the built-in one of the same name).
func (p Pricing) WithOverrides(over Pricing) Pricing {
	out := make(Pricing, len(p)+len(over))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
