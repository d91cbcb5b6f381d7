package writecheck

import (
	"cmp"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// readOnly commands write no file and run no program whatever their
// arguments; assigns set the variables they name (read NAME, printf -v NAME).
var (
	readOnly = set(
		"ls", "cat", "tac", "head", "tail", "nl", "od", "hexdump", "strings", "wc", "cut", "tr", "paste", "column",
		"fold", "fmt", "expand", "unexpand", "rev", "comm", "join", "seq", "yes", "sleep", "grep", "egrep", "fgrep",
		"zgrep", "zcat", "bzcat", "xzcat", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum",
		"base64", "jq", "expr", "pwd", "echo", "printf", "true", "false", ":", "test", "[", "which", "type", "help",
		"stat", "du", "df", "realpath", "readlink", "basename", "dirname", "id", "whoami", "uname", "nproc", "ps",
		"pgrep", "printenv", "env", "dirs", "shift", "return", "exit", "break", "continue", "read", "wait", "unset",
		"mapfile", "readarray", "getopts",
	)
	assigns = set("printf", "read", "wait", "unset", "mapfile", "readarray", "getopts")
)

// subcommandTools are remembered by their subcommand too: "always for git
// commit" is not "always for git push".
var subcommandTools = set("git", "go", "cargo", "npm", "pnpm", "yarn", "docker", "podman", "kubectl", "pip", "pip3",
	"uv", "poetry", "apt", "apt-get", "brew", "systemctl", "gh", "bun", "deno", "dotnet", "gradle", "mvn")

// askWord is the word "always" remembers for a command.
func askWord(args []arg) string {
	name := args[0].s
	if !subcommandTools[name] {
		return name
	}
	for i := 1; i < len(args) && args[i].known; i++ {
		switch s := args[i].s; {
		case s == "-C" || s == "-c":
			i++
		case !strings.HasPrefix(s, "-"):
			return name + " " + s
		}
	}
	return name
}

// run classifies the command args[0] with its arguments and returns the
// directory it leaves the shell in.
func (w *walker) run(args []arg, cwd string, depth int) string {
	if len(args) == 0 {
		return cwd
	}
	name := args[0].s
	if !args[0].known || name == "" {
		w.ask(cmp.Or(name, "''"), "is a command named only when it runs")
		return cwd
	}
	wr, wrapped := wrappers[name]
	switch {
	case name == "cd":
		return w.cd(args, cwd)
	case wrapped:
		inner, ok := wr.unwrap(w, args[1:])
		if !ok {
			w.ask(name, "takes options this check does not read")
			return cwd
		}
		if name == "xargs" && len(inner) > 0 {
			inner = append(inner, arg{s: "(words from its input)"})
		}
		if after := w.run(inner, cwd, depth); name == "command" || name == "builtin" {
			return after
		}
		return cwd
	case name == "eval" || (name == "bash" || name == "sh") && len(args) == 3 && args[1].s == "-c":
		code := args[1:] // eval WORDS, bash -c CODE
		if name != "eval" {
			code = args[2:]
		}
		var parts []string
		for _, a := range code {
			if !a.known {
				w.ask(name, "runs shell code known only when it runs ("+a.s+")")
				return ""
			}
			parts = append(parts, a.s)
		}
		if after := w.script(strings.Join(parts, " "), cwd, depth+1); name == "eval" {
			return after // eval runs in the shell itself
		}
		return cwd
	}
	for _, a := range args[1:] {
		w.code(a, name)
	}
	if why := w.classify(args, cwd, depth); why == inPlace {
		w.ask("sed -i", why) // "always sed" is not "always sed -i"
	} else if why != "" {
		w.ask(askWord(args), why)
	}
	if movers[name] || w.funcs[name] {
		return ""
	}
	return cwd
}

// classify says why a command (not a wrapper) asks, "" when it does not.
func (w *walker) classify(args []arg, cwd string, depth int) string {
	name, rest := args[0].s, args[1:]
	if assigns[name] {
		for i, a := range rest {
			if !a.known && name != "wait" && (name != "printf" || i == 0) {
				return "assigns a variable named only when it runs (" + a.s + ")"
			}
			w.setVar(varName(a.s), name)
		}
	}
	switch {
	case readOnly[name] || w.funcs[name]: // a function's body was checked where it was defined
		return ""
	case name == "uniq":
		if _, ops := split(rest); len(ops) > 1 {
			return "writes its second operand"
		}
		return option(rest, "")
	case options[name] != nil:
		return option(rest, options[name][0], options[name][1:]...)
	case name == "set":
		return setOptions(rest)
	case name == "find":
		return w.find(rest, depth)
	case name == "sed":
		return sed(rest)
	case name == "awk" || name == "gawk" || name == "mawk":
		return awk(rest)
	case name == "git":
		return w.git(rest, cwd)
	case name == "go":
		return w.goCmd(rest, cwd)
	case writers[name] != "":
		return w.writes(name, rest, cwd)
	}
	return "is not a command known to only read"
}

// options: commands that only read unless given these short options, or long ones.
var options = map[string][]string{"sort": {"o", "output", "compress-program"}, "rg": {"", "pre", "hostname-bin"},
	"tree": {"oRH", "output"}, "date": {"s", "set"}, "gofmt": {"w"}, "file": {"C", "compile"}}

// option says why a command asks that reads unless given a short option in
// short or a long one abbreviating one of longs, or an unknown word (which may be one).
func option(args []arg, short string, longs ...string) string {
	for _, a := range args {
		switch {
		case !a.known:
			return "takes " + a.s + ", which may be an option that writes or runs a program"
		case a.s == "--":
			return ""
		case strings.HasPrefix(a.s, "--"):
			name, _, _ := strings.Cut(a.s[2:], "=")
			if slices.ContainsFunc(longs, func(l string) bool { return name != "" && strings.HasPrefix(l, name) }) {
				return "takes " + a.s + ", which writes a file or runs a program"
			}
		case len(a.s) > 1 && a.s[0] == '-' && strings.ContainsAny(a.s[1:], short):
			return "takes " + a.s + ", which writes a file or runs a program"
		}
	}
	return ""
}

// split separates options (before "--") from operands.
func split(args []arg) (opts []string, ops []arg) {
	for i, a := range args {
		if a.known && a.s == "--" {
			return opts, append(ops, args[i+1:]...)
		}
		if a.known && len(a.s) > 1 && a.s[0] == '-' {
			opts = append(opts, a.s)
		} else {
			ops = append(ops, a)
		}
	}
	return opts, ops
}

// setOptions allows the options agents set for a script (set -euo pipefail).
func setOptions(args []arg) string {
	for _, a := range args {
		if a.known && (a.s == "--" || a.s == "-") {
			return ""
		}
		opt := len(a.s) > 1 && (a.s[0] == '-' || a.s[0] == '+') && strings.Trim(a.s[1:], "euxvo") == ""
		if !a.known || !opt && !slices.Contains([]string{"pipefail", "errexit", "nounset", "xtrace"}, a.s) {
			return "sets " + a.s + ", which changes how later command lines run"
		}
	}
	return ""
}

// cd returns the directory a cd leaves the shell in ("" when not known:
// options, CDPATH's search, pushd and popd are not followed).
func (w *walker) cd(args []arg, cwd string) string {
	switch {
	case len(args) == 1:
		return w.env["HOME"]
	case len(args) > 2 || !args[1].known || strings.HasPrefix(args[1].s, "-"):
		return ""
	case filepath.IsAbs(args[1].s):
		return filepath.Clean(args[1].s)
	case cwd == "":
		return ""
	}
	return filepath.Join(cwd, args[1].s) // bash's cd is logical: .. drops a component
}

// wrapper describes a program that runs the command after its options
// (a long option asks): the short ones without a value, those with one
// (glued or the next word), and the words before the command (timeout's
// duration).
type wrapper struct {
	flags, vals string
	lead        int
}

var wrappers = map[string]wrapper{"env": {"i0v", "u", 0}, "nice": {"0123456789", "n", 0}, "nohup": {}, "timeout": {"v", "sk", 1},
	"stdbuf": {"", "ioe", 0}, "command": {"p", "", 0}, "builtin": {}, "exec": {"cl", "a", 0}, "xargs": {"0rtpxoie", "adEILnPsl", 0}}

// unwrap returns the command a wrapper runs (nil for none), false when an
// option is not one it knows. env's NAME=value words are assignments.
func (wr wrapper) unwrap(w *walker, args []arg) ([]arg, bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.known:
			return nil, false
		case a.s == "--":
			i++
		case wr.vals == "u" && strings.Contains(a.s, "=") && !strings.HasPrefix(a.s, "-"): // env NAME=value
			w.setVar(varName(a.s), "")
			continue
		case a.s == "-v" && wr.flags == "p" || a.s == "-V": // command -v: a question, nothing runs
			return nil, true
		case strings.HasPrefix(a.s, "--"):
			return nil, false
		case len(a.s) > 1 && a.s[0] == '-':
			for j, c := range a.s[1:] {
				if strings.ContainsRune(wr.vals, c) {
					if j == len(a.s)-2 {
						i++ // the value is the next word
					}
					break
				}
				if !strings.ContainsRune(wr.flags, c) {
					return nil, false
				}
			}
			continue
		}
		break
	}
	if i+wr.lead > len(args) {
		return nil, true
	}
	return args[i+wr.lead:], true
}

// find asks for its actions that write (-delete, -fprint) and checks the
// commands -exec and -ok run (in a directory not known, for -execdir).
func (w *walker) find(args []arg, depth int) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.known:
			return "takes " + a.s + ", which may be an action that writes (-delete) when it runs"
		case a.s == "-delete" || strings.HasPrefix(a.s, "-fprint") || a.s == "-fls":
			return "deletes or writes files (" + a.s + ")"
		case a.s == "-exec" || a.s == "-execdir" || a.s == "-ok" || a.s == "-okdir":
			end := i + 1
			for end < len(args) && !(args[end].known && (args[end].s == ";" || args[end].s == "+")) {
				end++
			}
			inner := slices.Clone(args[i+1 : end])
			for k, x := range inner {
				if k > 0 && strings.Contains(x.s, "{}") {
					inner[k] = arg{s: x.s} // a path found when it runs
				}
			}
			w.run(inner, "", depth)
			i = end
		}
	}
	return ""
}

const inPlace = "edits files in place"

// sed asks for -i, for -f, and for a script holding w, W or e anywhere: the commands that
// write a file or run one (a regular expression with those letters asks
// too: reading sed's grammar is not worth it here).
func sed(args []arg) string {
	var scripts []string
	explicit, pending := false, byte(0) // pending: -e or -l waits for its value
	for _, a := range args {
		s := a.s
		switch long, ok := strings.CutPrefix(s, "--"); {
		case !a.known:
			return "takes " + s + ", which may be an option or a script that writes when it runs"
		case pending != 0:
			if pending == 'e' {
				scripts = append(scripts, s)
			}
			pending = 0
		case ok && long != "":
			if name, _, _ := strings.Cut(long, "="); strings.HasPrefix("in-place", name) {
				return inPlace
			}
			return "takes " + s + ", a long option this check does not read"
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				switch c := s[j]; c {
				case 'i':
					return inPlace
				case 'f':
					return "runs a script file, which may write files"
				case 'e', 'l':
					explicit = explicit || c == 'e'
					if j == len(s)-1 {
						pending = c
					} else if c == 'e' {
						scripts = append(scripts, s[j+1:])
					}
					j = len(s)
				}
			}
		case !explicit && len(scripts) == 0 && s != "--":
			scripts = append(scripts, s)
		}
	}
	if slices.ContainsFunc(scripts, func(s string) bool { return strings.ContainsAny(s, "wWe") }) {
		return "has a script with w, W or e in it, which may write a file or run a command"
	}
	return ""
}

// awk asks for a program that may redirect, pipe, call system() or a
// function by name (@f), and for options other than -F and -v (-f, -e,
// --source, -W read programs this check does not see).
func awk(args []arg) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.known:
			return "takes " + a.s + ", a program or option known only when it runs"
		case a.s == "-F" || a.s == "-v":
			i++
			continue
		case strings.HasPrefix(a.s, "-F") || strings.HasPrefix(a.s, "-v"):
			continue
		case strings.HasPrefix(a.s, "-"):
			return "takes " + a.s + ", an option that reads a program this check does not see"
		}
		if strings.ContainsAny(a.s, ">|@") || strings.Contains(a.s, "system") {
			return "has a program that may write a file or run a command (>, |, system, @)"
		}
		return ""
	}
	return ""
}

// gitReadOnly are git subcommands that change nothing whatever their
// arguments (--output and -O are checked apart).
var gitReadOnly = set("status", "diff", "log", "show", "blame", "grep", "rev-parse", "ls-files", "ls-tree", "cat-file",
	"describe", "shortlog", "rev-list", "merge-base", "show-ref", "version")

// git runs a read-only subcommand without asking, in a repository outside
// the scratch list: a repository's configuration can make git run
// programs (core.fsmonitor, core.pager), and one under the scratch list
// could have been written without asking.
func (w *walker) git(args []arg, cwd string) string {
	dir := cwd
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			return "takes " + a.s + ", known only when it runs"
		}
		if a.s == "-C" && i+1 < len(args) {
			i++
			dir = w.cd([]arg{{s: "cd", known: true}, args[i]}, dir)
			continue
		}
		if a.s == "--no-pager" || a.s == "-P" || a.s == "--no-optional-locks" {
			continue
		}
		if strings.HasPrefix(a.s, "-") {
			return "takes " + a.s + ", which can point git at other configuration, repositories or programs"
		}
		break
	}
	if i == len(args) {
		return ""
	}
	sub, rest := args[i].s, args[i+1:]
	if why := option(rest, "O", "output", "open-files-in-pager"); why != "" {
		return why
	}
	if opts, ops := split(rest); !gitReadOnly[sub] && (sub != "branch" || len(ops) > 0 ||
		slices.ContainsFunc(opts, func(o string) bool { return !slices.Contains(branchLists, o) })) {
		return "may change the repository or files"
	}
	if dir == "" || w.c.InScratch(dir) {
		return "runs in a repository under the scratch list (or not known before it runs), whose configuration can make git run programs"
	}
	return ""
}

// branchLists are the options with which git branch only lists.
var branchLists = []string{"-a", "-r", "-v", "-vv", "--list", "--all", "--remotes", "--verbose", "--show-current"}

// goReadOnly write nothing but Go's caches; go build, test, run and generate
// write a binary or run the project's code: they ask ("always" keeps them).
var goReadOnly = set("version", "env", "doc", "list", "vet", "help")

// goUnsafe flags write (env -w/-u), run a program or read another setup.
var goUnsafe = set("w", "u", "toolexec", "vettool", "exec", "http", "C", "modfile", "overlay")

func (w *walker) goCmd(args []arg, cwd string) string {
	sub := ""
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a.s, "-"), "=")
		switch {
		case !a.known:
			return "takes " + a.s + ", known only when it runs"
		case strings.HasPrefix(a.s, "-") && goUnsafe[name]:
			return "takes " + a.s + ", which writes or runs a program"
		case sub == "" && !strings.HasPrefix(a.s, "-"):
			sub = a.s
		}
	}
	if !goReadOnly[sub] {
		return "builds or runs code that may write files"
	}
	if cwd == "" || w.c.InScratch(cwd) {
		return "runs in a directory under the scratch list (or not known before it runs), whose go.mod may make go fetch and run another toolchain"
	}
	return ""
}

// writers are commands that write only the paths among their operands
// (all of them, or only the last: cp and ln read the others). They run
// without asking when those all lie in the scratch list.
var writers = map[string]string{"rm": "all", "rmdir": "all", "mkdir": "all", "touch": "all", "tee": "all", "mv": "all",
	"chmod": "all", "mktemp": "all", "install": "all", "cp": "last", "ln": "last"}

// flagWord is an option with no value glued to it; compiled on first use,
// not at every start.
var flagWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^--?[A-Za-z][A-Za-z-]*$`) })

func (w *walker) writes(name string, args []arg, cwd string) string {
	last, mode := writers[name] == "last", false
	var ops []arg
	for i, a := range args {
		switch {
		case a.known && a.s == "--":
			ops = append(ops, args[i+1:]...)
		case a.known && len(a.s) > 1 && a.s[0] == '-':
			if !flagWord().MatchString(a.s) {
				return "takes " + a.s + ", an option with a value this check does not read"
			}
			if name == "cp" && strings.HasPrefix(a.s, "--pa") {
				return "copies with " + a.s + ", into a path this check does not work out"
			}
			// -t DIR, -S SUFFIX: the last operand is not the only one written.
			long := strings.HasPrefix(a.s, "--")
			last = last && !strings.HasPrefix(a.s, "--t") && !strings.HasPrefix(a.s, "--su") && (long || !strings.ContainsAny(a.s, "tS"))
			mode = mode || name == "chmod" && strings.Trim(a.s[1:], "rwxXst") == ""
			continue
		default: // a word known only when it runs may be -t DIR or a mode
			last, mode = last && a.known, mode || !a.known
			ops = append(ops, a)
			continue
		}
		break
	}
	switch {
	case name == "chmod" && !mode && len(ops) > 0:
		ops = ops[1:] // the mode
	case name == "mktemp":
		tmp, ok := w.env["TMPDIR"]
		ops = append(ops, arg{s: tmp + "/", known: ok})
	case last && len(ops) > 0:
		ops = ops[len(ops)-1:]
	}
	for _, op := range ops {
		if !w.scratch(op, cwd) {
			return "writes " + describe(op, cwd)
		}
	}
	return ""
}
