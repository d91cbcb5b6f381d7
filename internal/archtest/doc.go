// Package archtest holds the tests that keep docs/architecture.md true on
// its own: the forbidden import edges (each with its reason, checked with
// `go list -deps`), that every package says what it is for, and that no
// package outside internal/agentsh spells an Agent Shell command name (they
// come from internal/agentsh/registry). It has no code of its own.
package archtest
