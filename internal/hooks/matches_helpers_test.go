package hooks

// Matches (tests and benchmarks) reports whether matcher fits the Bash command line: empty, "*"
// and "Bash" (the tool name, as Claude Code matchers use it) fit every
// call. Otherwise it fits when the command word of any command in the line
// (`git`, `mcp:files:read`) matches it either as a regular expression over
// the whole word (`go(fmt|imports)?`, `mcp:files:.*`) or as one of its
// "|"-separated glob patterns (`rm|mv`, `mcp:*`).
func Matches(matcher, command string) bool {
	return matches(matcher, wordRegexp(matcher), command)
}
