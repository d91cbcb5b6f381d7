// Package e2e holds end-to-end tests that wire the real parts together
// through package app (providers over HTTP against the fake LLM server, the
// agent loop, sub-agents, sandboxed shells under bubblewrap). It has no code
// of its own.
package e2e
