// Package archtest holds the tests that keep docs/architecture.md true on
// its own: the forbidden import edges (each with its reason, checked with
// `go list -deps`) and that every package says what it is for. It has no
// code of its own.
package archtest
