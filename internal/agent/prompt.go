package agent

import (
	"embed"
	"fmt"
	"runtime"
	"strings"
)

//go:embed prompts/*.md
var promptFS embed.FS

// promptParts are the system prompt's sections, in order.
var promptParts = [...]string{"role", "bash", "todo", "tasks", "skills", "principles"}

// SystemPrompt assembles the built-in system prompt for a session in cwd.
func SystemPrompt(cwd string) string {
	var b strings.Builder
	for _, name := range promptParts {
		data, err := promptFS.ReadFile("prompts/" + name + ".md")
		if err != nil {
			// The parts are compiled in; a missing one is a build mistake caught by tests.
			continue
		}
		b.WriteString(strings.TrimSpace(string(data)))
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "# Environment\n\n- Current directory: %s\n- Platform: %s/%s\n", cwd, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// Markers of the skill-search instruction block.
const (
	SkillSearchHeading     = "Skill Search Priority"
	OriginalRequestHeading = "Original user request"
)

// WrapSkillSearch puts the skill-search instruction before the user's text,
// which follows unchanged under its own heading.
func WrapSkillSearch(input string) string {
	return "## " + SkillSearchHeading + "\n\n" +
		"Before planning or running anything else, check whether an installed skill already covers this request:\n" +
		"1. Run `task:skill:search --prompt \"<what the user wants>\" --description \"find skills\"` to find matching skills.\n" +
		"2. If a skill fits, run `skill:load <name>` and follow its instructions.\n" +
		"3. If none fits, go on with the request using the other commands.\n" +
		"Skip the search only for a plain question or a trivial change that needs no tools.\n\n" +
		"## " + OriginalRequestHeading + "\n\n" + input
}

// UnwrapSkillSearch returns the user's text from a message WrapSkillSearch
// made, and any other text unchanged.
func UnwrapSkillSearch(text string) string {
	const marker = "\n## " + OriginalRequestHeading + "\n\n"
	if !strings.HasPrefix(text, "## "+SkillSearchHeading+"\n") {
		return text
	}
	if i := strings.Index(text, marker); i >= 0 {
		return text[i+len(marker):]
	}
	return text
}

// Markers of the block of context the user's UserPromptSubmit hooks add
// after the prompt.
const (
	hookContextOpen  = "<user-prompt-submit-hook>"
	hookContextClose = "</user-prompt-submit-hook>"
)

// AddHookContext appends what the UserPromptSubmit hooks printed to the
// prompt's text as a marked block, so that the model reads it as added by
// the user's hooks, not typed by the user.
func AddHookContext(text, context string) string {
	context = strings.TrimSpace(context)
	if context == "" {
		return text
	}
	return text + "\n\n" + hookContextOpen + "\n" +
		"Context added by the user's UserPromptSubmit hook (not typed by the user):\n" +
		context + "\n" + hookContextClose
}

// TypedPrompt returns what the user typed from a prompt message: without the
// skill-search instruction and without the hooks' context block.
func TypedPrompt(text string) string {
	text = UnwrapSkillSearch(text)
	if strings.HasSuffix(text, hookContextClose) {
		if i := strings.LastIndex(text, "\n\n"+hookContextOpen+"\n"); i >= 0 {
			return text[:i]
		}
	}
	return text
}
