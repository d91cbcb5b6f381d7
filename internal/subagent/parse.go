package subagent

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/cmdline"
	"github.com/synapse-agent/synapse/internal/router"
)

// Request is a parsed task:<type> command line.
type Request struct {
	Kind        Kind
	Prompt      string
	Description string
	// Model overrides the parent's model ("" keeps it).
	Model string
	// MaxTurns bounds the sub-agent's model turns (0: the default).
	MaxTurns int
	// Help is set by -h/--help: print the usage, start nothing.
	Help bool
}

// Errors of Parse. The messages are contract: they reach the model.
var (
	// ErrInvalidCommand is an unknown task type.
	ErrInvalidCommand = errors.New("Invalid task command") //nolint:staticcheck // exact text is a contract (seed 001)
	// ErrUnclosedQuote is a line that ends inside a quoted string.
	ErrUnclosedQuote = errors.New("Unclosed quote") //nolint:staticcheck // exact text is a contract (seed 001)
	// ErrUsage is any other mistake in the arguments.
	ErrUsage = errors.New("invalid task arguments")
)

// ParseError explains a line Parse refused; it matches (errors.Is) one of
// the Err* values above.
type ParseError struct {
	kind error
	msg  string
}

func (e *ParseError) Error() string        { return e.msg }
func (e *ParseError) Is(target error) bool { return target == e.kind }

func usageErr(k Kind, format string, args ...any) error {
	return &ParseError{kind: ErrUsage, msg: fmt.Sprintf(format, args...) + "\n" + usageLine(k.Name) +
		"\nRun `task:" + k.Name + " --help` for details."}
}

// parseIn reads `task:<type> [options]` of one of the types ks (the
// built-in ones and a session's custom ones: Custom.Parse). Options:
// -p/--prompt, -d/--description, --model, --max-turns N, -h/--help;
// values may be quoted ('…', "…" or mixed), and --opt=value works too.
func parseIn(line string, ks []Kind) (Request, error) {
	word := router.FirstWord(line)
	name, ok := strings.CutPrefix(word, "task:")
	if !ok {
		return Request{}, &ParseError{kind: ErrInvalidCommand, msg: fmt.Sprintf("Invalid task command: %q is not a task command. Use one of: %s.", word, kindNames(ks))}
	}
	i := slices.IndexFunc(ks, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Request{}, &ParseError{kind: ErrInvalidCommand, msg: fmt.Sprintf("Invalid task command: task:%s is not a sub-agent type. Use one of: %s (each explains itself with --help).", name, kindNames(ks))}
	}
	k := ks[i]
	words, err := cmdline.Split(router.Rest(line))
	if err != nil {
		return Request{}, &ParseError{kind: ErrUnclosedQuote, msg: "Unclosed quote in the task:" + k.Name +
			" arguments: every ' and \" must be closed. Quote each value whole, e.g. --prompt \"find the config loader\"."}
	}
	req := Request{Kind: k}
	seen := map[string]bool{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		flag, value, hasValue := w, "", false
		if strings.HasPrefix(w, "--") {
			flag, value, hasValue = strings.Cut(w, "=")
		}
		switch flag {
		case "-h", "--help":
			// Help wins over every other mistake in the line: it starts nothing.
			return Request{Kind: k, Help: true}, nil
		case "-p", "--prompt", "-d", "--description", "--model", "--max-turns":
		default:
			if strings.HasPrefix(w, "-") && len(w) > 1 {
				return Request{}, usageErr(k, "Unknown option %q for task:%s.", flag, k.Name)
			}
			return Request{}, usageErr(k, "Unexpected argument %q: give the task text with --prompt \"...\" (quoted). "+
				"A task command runs alone: it cannot be combined with other commands, pipes or redirections.", w)
		}
		long := longName(flag)
		if seen[long] {
			return Request{}, usageErr(k, "%s is given twice.", long)
		}
		seen[long] = true
		if !hasValue {
			if i+1 >= len(words) {
				return Request{}, usageErr(k, "%s needs a value.", flag)
			}
			i++
			value = words[i]
		}
		switch long {
		case "--prompt":
			req.Prompt = value
		case "--description":
			req.Description = value
		case "--model":
			if strings.TrimSpace(value) == "" {
				return Request{}, usageErr(k, "--model needs a model name.")
			}
			req.Model = strings.TrimSpace(value)
		case "--max-turns":
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n <= 0 {
				return Request{}, usageErr(k, "--max-turns must be a positive whole number, not %q.", value)
			}
			req.MaxTurns = n
		}
	}
	var missing []string
	if strings.TrimSpace(req.Prompt) == "" {
		missing = append(missing, "--prompt")
	}
	if strings.TrimSpace(req.Description) == "" {
		missing = append(missing, "--description")
	}
	if len(missing) > 0 {
		return Request{}, usageErr(k, "Missing %s: task:%s needs a prompt (the full task) and a description (a short label).",
			strings.Join(missing, " and "), k.Name)
	}
	return req, nil
}

func longName(flag string) string {
	switch flag {
	case "-p":
		return "--prompt"
	case "-d":
		return "--description"
	}
	return flag
}

func usageLine(name string) string {
	return `Usage: task:` + name + ` --prompt "<task>" --description "<short label>" [--model <model>] [--max-turns N]`
}

// helpIn is the --help text of k among the types ks.
func helpIn(k Kind, ks []Kind) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task:%s — %s\n\n", k.Name, k.Summary)
	b.WriteString("USAGE\n")
	fmt.Fprintf(&b, "  task:%s --prompt \"<task>\" --description \"<short label>\" [--model <model>] [--max-turns N]\n\n", k.Name)
	b.WriteString("OPTIONS\n")
	b.WriteString("  -p, --prompt TEXT        the whole task, with the paths, names and questions that matter (required)\n")
	b.WriteString("  -d, --description TEXT   a short label shown while the sub-agent runs (required)\n")
	b.WriteString("      --model MODEL        the model to use (default: the main agent's)\n")
	fmt.Fprintf(&b, "      --max-turns N        the most model turns it may take (default %d)\n", DefaultMaxTurns)
	b.WriteString("  -h, --help               show this help; nothing is started\n\n")
	b.WriteString("SUB-AGENT TYPES\n")
	for _, o := range ks {
		fmt.Fprintf(&b, "  task:%-15s %s\n", o.Name, o.Summary)
	}
	b.WriteString("\nNOTES\n")
	b.WriteString("  - A sub-agent starts fresh: its own history, shell and todo list. Put everything it needs in --prompt.\n")
	b.WriteString("  - Its final answer is this command's output. Several task:* calls in one turn run in parallel\n")
	b.WriteString("    (at most SYNAPSE_MAX_PARALLEL_TASKS at once, default 5).\n")
	b.WriteString("  - Sub-agents cannot start sub-agents. task:explore cannot change files.\n")
	b.WriteString("  - Exit status: 0 done, 1 failed, 124 timed out (SYNAPSE_TASK_TIMEOUT, milliseconds), 130 interrupted.\n\n")
	b.WriteString("EXAMPLE\n")
	switch {
	case k.Custom():
		fmt.Fprintf(&b, "  task:%s -p \"<the whole task>\" -d \"<short label>\"\n", k.Name)
		return b.String()
	}
	switch k.Name {
	case Explore:
		b.WriteString(`  task:explore -p "How does internal/config load settings.json? List the functions involved." -d "config loading"` + "\n")
	case SkillSearch:
		b.WriteString(`  task:skill:search -p "convert a PDF report to Markdown" -d "find skills"` + "\n")
	case SkillEnhance:
		b.WriteString(`  task:skill:enhance -p "Add the steps that fixed the flaky deploy to the deploy-helper skill: ..." -d "improve deploy-helper"` + "\n")
	default:
		b.WriteString(`  task:general -p "Find why go test ./internal/store fails on a clean checkout and fix it" -d "fix store tests"` + "\n")
	}
	return b.String()
}
