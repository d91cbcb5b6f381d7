package writecheck

import (
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// readOnly are commands that write no file whatever their arguments
// (their output goes to stdout; redirections are checked apart). Builtins
// that assign variables (read, printf -v, declare) or run commands (jobs
// -x, compgen -C) have handlers instead.
var readOnly = set(
	"ls", "dir", "vdir", "cat", "tac", "head", "tail", "nl", "od", "hexdump", "strings", "wc", "cut", "tr",
	"paste", "column", "fold", "fmt", "expand", "unexpand", "rev", "comm", "join", "seq", "yes", "sleep",
	"grep", "egrep", "fgrep", "zgrep", "zcat", "bzcat", "xzcat",
	"diff", "cmp", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum",
	"base64", "base32", "basenc", "jq", "numfmt", "tsort", "look", "factor", "expr",
	"pwd", "echo", "true", "false", ":", "which", "whereis", "type", "help",
	"stat", "du", "df", "realpath", "readlink", "basename", "dirname", "id", "whoami", "groups", "uname",
	"arch", "nproc", "uptime", "free", "ps", "pgrep", "lscpu", "lsblk", "getconf", "locale", "tty", "printenv",
	"cal", "dirs", "shift", "return", "exit", "break", "continue", "umask", "ulimit", "unalias",
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// subcommandTools are remembered by their subcommand too: "always for git
// commit" is not "always for git push".
var subcommandTools = set("git", "go", "cargo", "npm", "pnpm", "yarn", "docker", "podman", "kubectl", "pip", "pip3",
	"uv", "poetry", "apt", "apt-get", "brew", "systemctl", "gh", "bun", "deno", "dotnet", "gradle", "mvn")

// call checks a simple command.
func (w *walker) call(x *syntax.CallExpr, cwds cwdSet, depth int) cwdSet {
	w.substs(x.Args, cwds, depth)
	for _, a := range x.Assigns {
		w.assign(a, "", len(x.Args) == 0, cwds, depth)
	}
	if len(x.Args) == 0 {
		return cwds
	}
	args := w.args(x.Args)
	for i, a := range args {
		// A pattern at a word's start may match a name that is an option
		// (a file "-f" makes `sed -n p *` read a script): in a directory
		// written without asking, such names can be planted.
		if a.glob && strings.IndexAny(a.s, "*?[") == 0 && (slices.Contains(cwds, "") || w.scratch(literal("."), cwds)) {
			args[i].loose = true
		}
	}
	return w.run(args, cwds, depth, false)
}

// cmd is one command to classify: its name and evaluated arguments.
type cmd struct {
	w     *walker
	name  string
	args  []arg
	cwds  cwdSet
	depth int
}

// run classifies the command args[0] with its arguments and returns the
// directories it leaves the shell in. noFuncs: the word names a program or
// builtin, not a function (env, xargs, command … run it).
func (w *walker) run(args []arg, cwds cwdSet, depth int, noFuncs bool) cwdSet {
	if len(args) == 0 {
		return cwds
	}
	if !args[0].known {
		w.ask(args[0].text(), "is a command named only when it runs")
		return cwds
	}
	name := commandName(args[0].s)
	if name == "" {
		w.ask(`""`, "is an empty command name")
		return cwds
	}
	c := &cmd{w: w, name: name, args: args[1:], cwds: cwds, depth: depth}
	if moves, ok := w.funcs[name]; ok && !noFuncs {
		// Declared above in this line: its body was checked.
		if moves {
			return cwds.union(cwdSet{""})
		}
		return cwds
	}
	if readOnly[name] {
		return cwds
	}
	h, ok := handlers[name]
	if !ok {
		c.ask("is not known to only read")
		return cwds
	}
	n := len(w.reasons)
	out := h(c)
	// A word known only when it runs may be an option that writes ("-o
	// f") or several words: the handler's reading of the rest is then
	// not sure. Handlers in ownsUnknown ask about such words themselves.
	if !ownsUnknown[name] && !slices.ContainsFunc(w.reasons[n:], func(r Reason) bool { return r.Word == c.word() }) {
		for _, a := range c.args {
			if a.loose && !(a.known && globSafe[name]) {
				c.ask("takes " + a.text() + ", which may be options or several words when it runs")
				break
			}
		}
	}
	return out
}

// ownsUnknown are the handlers that ask about words not known before
// running themselves, or read them so that they cannot write.
var ownsUnknown = set("cd", "pushd", "popd", "find", "git", "dd", "eval", "trap", "alias", "printf", "unset", "set", "test", "[", "declare", "local", "typeset", "export", "readonly", "let", "command", "builtin",
	"bash", "sh", "dash", "ksh")

// globSafe are commands whose options, should a pattern match a file
// named like one, change nothing outside the matches' own directory (mv
// is not: a file "-t.." moves them all up).
var globSafe = set("rm", "rmdir", "unlink", "mkdir", "mkfifo", "touch", "truncate", "tee", "shred", "chmod", "chown", "chgrp")

// word is what "always" remembers for c.
func (c *cmd) word() string {
	if subcommandTools[c.name] {
		for i := 0; i < len(c.args); i++ {
			a := c.args[i]
			if c.name == "git" && a.known && (a.s == "-C" || a.s == "-c" || a.s == "--git-dir" || a.s == "--work-tree" || a.s == "--namespace" || a.s == "--config-env") {
				i++ // a global option's value
				continue
			}
			if a.known && a.s != "" && !strings.HasPrefix(a.s, "-") {
				return c.name + " " + a.s
			}
		}
	}
	return c.name
}

func (c *cmd) ask(why string) { c.w.ask(c.word(), why) }

// writes asks about each target outside the scratch list.
func (c *cmd) writes(targets ...arg) {
	for _, t := range targets {
		if !c.w.scratch(t, c.cwds) {
			c.ask("writes " + describe(t, c.cwds))
		}
	}
}

// literal is a known word made by the check (an option's attached value).
func literal(s string) arg { return arg{s: s, known: true, src: s} }

// under is path p made under directory dir (cp --parents, mktemp -p):
// known when both are.
func under(dir, p arg) arg {
	if !dir.known || !p.known {
		return arg{src: dir.text() + "/" + p.text()}
	}
	return literal(filepath.Join(dir.s, p.s))
}

// chdir is where cd d leads from each of cwds.
func chdir(cwds cwdSet, d arg) cwdSet {
	if !d.known || d.glob || d.s == "-" || strings.HasPrefix(d.s, "+") {
		return cwdSet{""}
	}
	if filepath.IsAbs(d.s) {
		return cwdSet{filepath.Clean(d.s)}
	}
	var out cwdSet
	for _, cur := range cwds {
		if cur == "" {
			out = out.union(cwdSet{""})
			continue
		}
		out = out.union(cwdSet{filepath.Join(cur, d.s)})
	}
	return out
}

// handlers classify the commands that read or write depending on their
// arguments, and those that run other commands.
var handlers map[string]func(*cmd) cwdSet

func init() {
	operands := func(short string, long ...string) func(*cmd) cwdSet {
		return func(c *cmd) cwdSet {
			_, ops := parse(c.args, short, long...)
			c.writes(ops...)
			return c.cwds
		}
	}
	outputOpt := func(short string, names ...string) func(*cmd) cwdSet {
		return func(c *cmd) cwdSet {
			opts, _ := parse(c.args, short)
			c.writes(vals(opts, names...)...)
			return c.cwds
		}
	}
	// fromOperand: the operands from the nth on are written (uniq IN OUT,
	// xxd IN OUT); an option value taken for an operand only adds one.
	fromOperand := func(short string, n int, long ...string) func(*cmd) cwdSet {
		return func(c *cmd) cwdSet {
			if _, ops := parse(c.args, short, long...); len(ops) > n {
				c.writes(ops[n:]...)
			}
			return c.cwds
		}
	}
	handlers = map[string]func(*cmd) cwdSet{
		"cd": cd, "pushd": cd,
		"popd": func(c *cmd) cwdSet { return cwdSet{""} },

		"rm": operands(""), "rmdir": operands(""), "unlink": operands(""), "shred": operands("ns", "--iterations", "--size", "--random-source"),
		"mkdir": operands("m", "--mode"), "mkfifo": operands("m", "--mode"), "touch": operands("drt", "--date", "--reference"),
		"truncate": operands("sr", "--size", "--reference"), "tee": operands(""),
		"mknod": func(c *cmd) cwdSet {
			if _, ops := parse(c.args, "m", "--mode"); len(ops) > 0 {
				c.writes(ops[0])
			}
			return c.cwds
		},
		"chmod": chmod, "chown": chmod, "chgrp": chmod,
		"cp": cp, "mv": mv, "ln": ln, "install": install,
		"dd":   dd,
		"sed":  sed,
		"sort": sortCmd, "shuf": outputOpt("ino", "-o", "--output"),
		"uniq": fromOperand("fsw", 1, "--skip-fields", "--skip-chars", "--check-chars"), "xxd": fromOperand("cglosn", 1),
		"tree": func(c *cmd) cwdSet {
			opts, ops := parse(c.args, "LPIHTo")
			c.writes(vals(opts, "-o")...)
			if has(opts, "-R") { // writes 00Tree.html into every directory it lists
				if len(ops) == 0 {
					ops = []arg{literal(".")}
				}
				c.writes(ops...)
			}
			return c.cwds
		},
		"sdiff": func(c *cmd) cwdSet {
			opts, _ := parse(c.args, "ow", "--output", "--width", "--diff-program")
			switch {
			case has(opts, "--diff-program"):
				c.ask("runs its diff program")
			case has(opts, "-o", "--output"):
				c.ask("merges into a file interactively: its e command runs an editor")
			}
			return c.cwds
		},
		"time":    timeCmd,
		"file":    ifOption("compiles a magic file", "-C", "--compile"),
		"yq":      ifOption("edits files in place or splits them into files", "-i", "--inplace", "-s", "--split-exp"),
		"rg":      ifOption("runs a preprocessor or host name command", "--pre", "--hostname-bin"),
		"ag":      ifOption("runs a pager", "--pager"),
		"hash":    ifOption("maps a command name to a program", "-p"),
		"date":    ifOption("sets the clock", "-s", "--set"),
		"history": ifOption("changes the history file", "-c", "-d", "-w", "-a", "-r", "-n", "-s"),
		"alias": func(c *cmd) cwdSet {
			for _, a := range c.args {
				if !a.known || strings.Contains(a.s, "=") {
					c.ask("defines an alias, which changes what later commands run")
					break
				}
			}
			return c.cwds
		},
		"hostname": func(c *cmd) cwdSet {
			if opts, ops := parse(c.args, "F", "--file"); len(ops) > 0 || has(opts, "-F", "--file") {
				c.ask("sets the host name")
			}
			return c.cwds
		},
		"awk": awk, "gawk": awk, "mawk": awk, "nawk": awk,
		"find": find, "fd": fd, "fdfind": fd,
		"xargs": xargs,
		"env":   env, "command": command, "builtin": command,
		"exec": wrapper("a"), "nice": wrapper("n", "--adjustment"), "nohup": wrapper(""),
		"stdbuf": wrapper("ioe", "--input", "--output", "--error"), "setsid": wrapper(""),
		"ionice": wrapper("cnpPu", "--class", "--classdata", "--pid", "--pgid", "--uid"), "timeout": timeout,
		"bash": shell, "sh": shell, "dash": shell, "ksh": shell,
		"zsh": func(c *cmd) cwdSet {
			c.ask("runs zsh code, whose syntax (glob qualifiers that run commands) this check does not read")
			return c.cwds
		},
		"eval": eval, "trap": trap,
		"git": git, "go": goCmd,
		"tar": tar, "unzip": unzip, "mktemp": mktemp, "split": split,
		"gzip": compress, "gunzip": compress, "bzip2": compress, "bunzip2": compress, "xz": compress,
		"unxz": compress, "zstd": compress, "unzstd": compress, "lz4": compress,
		"zstdcat": func(c *cmd) cwdSet { // zstd -dcf: its -o still names a file
			c.args = append([]arg{literal("-c")}, c.args...)
			return compress(c)
		},
	}
	for name, h := range builtins {
		handlers[name] = h
	}
}

// ifOption asks when any of names is given; the command reads otherwise.
func ifOption(why string, names ...string) func(*cmd) cwdSet {
	return func(c *cmd) cwdSet {
		for _, a := range c.args {
			if !a.known {
				continue
			}
			name, _, _ := strings.Cut(a.s, "=")
			if matches(name, names) || (len(name) > 2 && name[0] == '-' && name[1] != '-' && clusterHas(name, names)) {
				c.ask(why)
				break
			}
		}
		return c.cwds
	}
}

// clusterHas reports whether a short-option cluster (-xvC) holds one of
// the short names.
func clusterHas(cluster string, names []string) bool {
	for _, n := range names {
		if len(n) == 2 && n[0] == '-' && n[1] != '-' && strings.IndexByte(cluster[1:], n[1]) >= 0 {
			return true
		}
	}
	return false
}

// cd and pushd: pushd -n changes no directory, pushd alone swaps the top
// two of the stack.
func cd(c *cmd) cwdSet {
	opts, ops := parse(c.args, "")
	if c.name == "pushd" {
		if has(opts, "-n") {
			return c.cwds
		}
		if len(ops) == 0 || len(opts) > 0 {
			return cwdSet{""} // pushd, pushd -1
		}
	}
	if len(ops) == 0 {
		if home, ok := c.w.known("HOME"); ok {
			return cwdSet{home}
		}
		return cwdSet{""}
	}
	return chdir(c.cwds, ops[0])
}

// chmod, chown and chgrp: the first operand is the mode or owner (unless
// --reference gives it); the rest are changed.
func chmod(c *cmd) cwdSet {
	haveSpec := false
	var targets []arg
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a.known && strings.HasPrefix(a.s, "--"):
			if strings.HasPrefix(a.s, "--reference") {
				haveSpec = true
			}
			continue
		case a.known && len(a.s) > 1 && a.s[0] == '-' && strings.Trim(a.s[1:], "RcfvhHLP") == "":
			continue // options; a mode such as -w is taken below
		case !haveSpec:
			haveSpec = true
			continue
		}
		targets = append(targets, a)
	}
	if len(targets) == 0 {
		targets = append(targets, arg{src: "its operands"})
	}
	c.writes(targets...)
	return c.cwds
}

// cpLinkShort are the short options that make cp carry links over (or make
// them): a link copied into the scratch list from elsewhere would lead a
// later scratch write out of it.
var cpLinkShort = "adPRrsl"

func cp(c *cmd) cwdSet {
	opts, ops := parse(c.args, "St", "--target-directory", "--suffix")
	targets := vals(opts, "-t", "--target-directory")
	sources := ops
	if len(targets) == 0 && len(ops) > 1 {
		targets, sources = ops[len(ops)-1:], ops[:len(ops)-1]
	}
	c.writes(targets...)
	if has(opts, "--parents") {
		// Each source's path is made under the target, .. included.
		for _, t := range targets {
			for _, s := range sources {
				c.writes(under(t, s))
			}
		}
	}
	links := false
	for _, o := range opts {
		if len(o.name) == 2 && strings.IndexByte(cpLinkShort, o.name[1]) >= 0 ||
			matches(o.name, []string{"--archive", "--no-dereference", "--recursive", "--symbolic-link", "--link"}) ||
			matches(o.name, []string{"--preserve"}) && (strings.Contains(o.val.s, "links") || strings.Contains(o.val.s, "all")) {
			links = true
		}
	}
	if links {
		for _, s := range sources {
			if !c.w.scratch(s, c.cwds) {
				c.ask("copies links or a tree from " + describe(s, c.cwds) + " into the scratch list")
				break
			}
		}
	}
	return c.cwds
}

// mv changes its sources (they go away) and its destination.
func mv(c *cmd) cwdSet {
	opts, ops := parse(c.args, "St", "--target-directory", "--suffix")
	c.writes(append(vals(opts, "-t", "--target-directory"), ops...)...)
	return c.cwds
}

// ln: every operand counts, the link's target too: a link in the scratch
// list to a file outside it would let a later scratch write reach that
// file. A symbolic link's relative target is read from the link's
// directory, not the current one: with .. it may leave it.
func ln(c *cmd) cwdSet {
	opts, ops := parse(c.args, "St", "--target-directory", "--suffix")
	dirs := vals(opts, "-t", "--target-directory")
	targets := append(slices.Clone(dirs), ops...)
	sources := ops
	if len(dirs) == 0 && len(ops) > 1 {
		sources = ops[:len(ops)-1]
	}
	if len(ops) == 1 && len(dirs) == 0 && ops[0].known {
		// ln TARGET: the link is made in the current directory.
		targets = append(targets, arg{s: filepath.Base(ops[0].s), known: true, src: "."})
	}
	c.writes(targets...)
	if has(opts, "-s", "--symbolic") {
		for _, s := range sources {
			if s.known && !filepath.IsAbs(s.s) && slices.Contains(strings.Split(s.s, "/"), "..") {
				c.ask("makes a symbolic link to " + s.s + ", which is read from the link's directory and may leave it")
				break
			}
		}
	}
	return c.cwds
}

func install(c *cmd) cwdSet {
	opts, ops := parse(c.args, "mogSt", "--mode", "--owner", "--group", "--suffix", "--target-directory", "--strip-program")
	if has(opts, "--strip-program") {
		c.ask("runs a strip program")
	}
	switch {
	case has(opts, "-d", "--directory"):
		c.writes(ops...)
	case len(vals(opts, "-t", "--target-directory")) > 0:
		c.writes(vals(opts, "-t", "--target-directory")...)
	case len(ops) > 0:
		c.writes(ops[len(ops)-1])
	}
	return c.cwds
}

func dd(c *cmd) cwdSet {
	for _, a := range c.args {
		if !a.known {
			c.ask("takes an operand known only when it runs (" + a.text() + ")")
			continue
		}
		if v, ok := strings.CutPrefix(a.s, "of="); ok {
			c.writes(literal(v))
		}
	}
	return c.cwds
}

func sortCmd(c *cmd) cwdSet {
	opts, _ := parse(c.args, "kotST", "--key", "--output", "--field-separator", "--buffer-size", "--temporary-directory",
		"--compress-program", "--files0-from", "--random-source", "--parallel", "--sort")
	c.writes(vals(opts, "-o", "--output")...)
	if has(opts, "--compress-program") {
		c.ask("runs a compression program")
	}
	return c.cwds
}

// find: -delete removes under its starting points, -fprint* write files,
// -exec and -ok run commands ({} is a found path). A word known only when
// it runs may be any of them, unless it is the value of a test.
func find(c *cmd) cwdSet {
	var roots []arg
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if a.loose {
			c.ask("takes " + a.text() + ", which may be an action when it runs")
			return c.cwds
		}
		if a.known && (strings.HasPrefix(a.s, "-") || a.s == "(" || a.s == "!") {
			if a.s == "-H" || a.s == "-L" || a.s == "-P" || strings.HasPrefix(a.s, "-O") || a.s == "-D" {
				if a.s == "-D" {
					i++
				}
				continue
			}
			break
		}
		roots = append(roots, a)
	}
	if len(roots) == 0 {
		roots = []arg{literal(".")}
	}
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known {
			c.ask("takes " + a.text() + ", which may be an action when it runs")
			return c.cwds
		}
		switch {
		case a.s == "-files0-from": // the starting points come from a file
			roots = []arg{{src: "the starting points read from a file"}}
			i++
		case findValue[a.s] || strings.HasPrefix(a.s, "-newer"):
			if i+1 < len(c.args) {
				i++
				if v := c.args[i]; !v.known && v.node != nil && c.w.splits(v.node) {
					c.ask("takes " + v.text() + ", which may be several words, an action among them")
					return c.cwds
				}
			}
		case a.s == "-delete":
			c.writes(roots...)
		case a.s == "-fprint" || a.s == "-fprint0" || a.s == "-fprintf" || a.s == "-fls":
			if i+1 < len(c.args) {
				c.writes(c.args[i+1])
				i++
			}
			if a.s == "-fprintf" {
				i++ // the format
			}
		case a.s == "-exec" || a.s == "-execdir" || a.s == "-ok" || a.s == "-okdir":
			j := i + 1
			var inner []arg
			for ; j < len(c.args); j++ {
				if b := c.args[j]; b.known && (b.s == ";" || b.s == "+") {
					break
				}
				inner = append(inner, placeholders(c.args[j], foundPath, "{}"))
			}
			execCwds := c.cwds
			if strings.HasSuffix(a.s, "dir") {
				execCwds = cwdSet{""}
			}
			c.w.run(inner, execCwds, c.depth, true)
			i = j
		}
	}
	return c.cwds
}

// findValue are find's tests and options that take one value.
var findValue = set("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname",
	"-ilname", "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm", "-size", "-mtime", "-atime", "-ctime",
	"-mmin", "-amin", "-cmin", "-used", "-links", "-inum", "-samefile", "-maxdepth", "-mindepth", "-fstype", "-context",
	"-printf", "-regextype")

// placeholders makes a word holding one of marks (a path or input word
// put in place at run time) stand for it.
func placeholders(a arg, as arg, marks ...string) arg {
	if a.known {
		for _, m := range marks {
			if m != "" && strings.Contains(a.s, m) {
				return as
			}
		}
	}
	return a
}

// fdShort are fd's short options that take a value.
const fdShort = "etdEScjo"

// fdMarks are what fd -x replaces with parts of a found path.
var fdMarks = []string{"{}", "{/}", "{//}", "{.}", "{/.}"}

// fd runs its -x/-X command on each match, from --base-directory if given.
func fd(c *cmd) cwdSet {
	cwds := c.cwds
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known {
			continue
		}
		name, val, eq := strings.Cut(a.s, "=")
		if matches(name, []string{"--base-directory"}) {
			cwds = cwdSet{""}
			if !eq {
				i++
			}
			continue
		}
		// In a cluster, x after a letter that takes a value is that value (-tx).
		cluster := len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-'
		before := a.s
		if cluster {
			before = a.s[1:strings.IndexAny(a.s+"x", "xX")]
		}
		execs := matches(name, []string{"--exec", "--exec-batch"}) ||
			cluster && strings.ContainsAny(a.s, "xX") && !strings.ContainsAny(before, fdShort)
		if !execs {
			continue
		}
		if cluster && !strings.HasSuffix(a.s, "x") && !strings.HasSuffix(a.s, "X") {
			c.ask("runs a command on each match") // -xCMD, or x inside a value
			return c.cwds
		}
		var inner []arg
		if eq {
			inner = append(inner, literal(val))
		}
		for _, b := range c.args[i+1:] {
			if b.known && b.s == ";" {
				break
			}
			inner = append(inner, placeholders(b, inputWords, fdMarks...))
		}
		if len(inner) == 0 {
			c.ask("runs a command on each match")
			return c.cwds
		}
		inner = append(inner, inputWords) // fd appends the path when there is no {}
		c.w.run(inner, cwds, c.depth, true)
		return c.cwds
	}
	return c.cwds
}

// xargsShort are xargs' short options that take a value.
const xargsShort = "adEILnPs"

// xargs runs its command with words read from stdin, appended or, with
// -I/-i, put in place of a replace string.
func xargs(c *cmd) cwdSet {
	opts, inner := leading(c.args, xargsShort, "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars",
		"--process-slot-var")
	if len(inner) == 0 {
		return c.cwds // echo
	}
	marks := []string{"{}"}
	replace := false
	for _, o := range opts {
		switch {
		case o.name == "-I":
			replace = true
			marks = append(marks, o.val.s)
		case matches(o.name, []string{"--replace"}):
			replace = true
			marks = append(marks, o.val.s)
		}
	}
	// -iR sets R: the cluster's letters after i (parsed as options above),
	// unless a letter before it takes them as its value (-Eexit).
	for _, a := range c.args[:len(c.args)-len(inner)] {
		if a.known && len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' {
			if before, r, ok := strings.Cut(a.s[1:], "i"); ok && !strings.ContainsAny(before, xargsShort) {
				replace = true
				marks = append(marks, r)
			}
		}
	}
	out := make([]arg, 0, len(inner)+1)
	for _, a := range inner {
		out = append(out, placeholders(a, inputWords, marks...))
	}
	if !replace {
		out = append(out, inputWords) // the words read are appended
	}
	c.w.run(out, c.cwds, c.depth, true)
	return c.cwds
}

// timeCmd is the time program (the shell keyword is a TimeClause): -o
// writes its report to a file.
func timeCmd(c *cmd) cwdSet {
	opts, rest := leading(c.args, "fo", "--format", "--output")
	c.writes(vals(opts, "-o", "--output")...)
	c.w.run(rest, c.cwds, c.depth, true)
	return c.cwds
}

// wrapper returns the handler of a program that runs the rest of its words
// as a program after its options (short and long list those that take a
// value). What that program does to its directory is not the shell's.
func wrapper(short string, long ...string) func(*cmd) cwdSet {
	return func(c *cmd) cwdSet {
		_, rest := leading(c.args, short, long...)
		c.w.run(rest, c.cwds, c.depth, true)
		return c.cwds
	}
}

// command and builtin run a builtin or program, never a function, in the
// shell itself; command -v and -V only say what a name is.
func command(c *cmd) cwdSet {
	opts, rest := leading(c.args, "")
	if c.name == "command" && has(opts, "-v", "-V") {
		return c.cwds
	}
	return c.w.run(rest, c.cwds, c.depth, true)
}

func timeout(c *cmd) cwdSet {
	_, rest := leading(c.args, "sk", "--signal", "--kill-after")
	if len(rest) > 0 {
		rest = rest[1:] // the duration
	}
	c.w.run(rest, c.cwds, c.depth, true)
	return c.cwds
}

// env runs a program with a changed environment, maybe in another
// directory (-C).
func env(c *cmd) cwdSet {
	opts, rest := leading(c.args, "uCS", "--unset", "--chdir", "--split-string")
	if has(opts, "-S", "--split-string") {
		c.ask("runs a command from a split string")
		return c.cwds
	}
	cwds := c.cwds
	for _, d := range vals(opts, "-C", "--chdir") {
		cwds = chdir(cwds, d)
	}
	i := 0
	for ; i < len(rest); i++ {
		name, ok := assignName(rest[i])
		if !ok {
			break
		}
		if dangerous(name) {
			c.w.ask(name+"=", "sets "+name+", which changes what the command runs or where it writes")
		}
	}
	c.w.run(rest[i:], cwds, c.depth, true)
	return c.cwds
}

// assignName is the NAME of a NAME=value word, whose value may be known
// only when it runs (env FOO="$x" cmd).
func assignName(a arg) (string, bool) {
	lead := a.s
	if !a.known {
		lead = ""
		if a.node != nil && len(a.node.Parts) > 0 {
			if lit, ok := a.node.Parts[0].(*syntax.Lit); ok {
				lead = lit.Value
			}
		}
	}
	name, _, ok := strings.Cut(lead, "=")
	return name, ok && name != ""
}

// shell checks the code of `bash -c CODE`; a script file is not read.
func shell(c *cmd) cwdSet {
	for i, a := range c.args {
		if !a.known || !strings.HasPrefix(a.s, "-") {
			break
		}
		if strings.HasPrefix(a.s, "--") {
			continue
		}
		if strings.Contains(a.s, "c") && i+1 < len(c.args) {
			if code := c.args[i+1]; code.known {
				c.w.script(code.s, c.cwds, c.depth+1)
				return c.cwds
			}
			break
		}
	}
	c.ask("runs a shell script this check does not read")
	return c.cwds
}

// eval runs its words as code in the shell itself: a cd in it stays.
func eval(c *cmd) cwdSet {
	words := make([]string, 0, len(c.args))
	for _, a := range c.args {
		if !a.known {
			c.ask("evaluates code known only when it runs")
			return c.cwds
		}
		words = append(words, a.s)
	}
	return c.w.script(strings.Join(words, " "), c.cwds, c.depth+1)
}

// trap's action runs later, from wherever the shell is then; one that
// changes directory (a DEBUG trap runs before each command) leaves the
// directory of what follows unknown.
func trap(c *cmd) cwdSet {
	_, ops := parse(c.args, "")
	if len(ops) < 2 {
		return c.cwds // trap -p, trap -l, trap SIG
	}
	act := ops[0]
	switch {
	case !act.known:
		c.ask("sets an action known only when it runs")
	case act.s != "" && act.s != "-":
		if !slices.Equal(c.w.script(act.s, cwdSet{elsewhere}, c.depth+1), cwdSet{elsewhere}) {
			// The session is one shell: a DEBUG trap runs before every
			// later command, of later command lines too.
			c.ask("sets an action that changes directory, before commands of this and later command lines")
			return c.cwds.union(cwdSet{""})
		}
	}
	return c.cwds
}

// gitReadOnly are git subcommands that change nothing whatever their
// arguments (writing options such as --output are checked apart).
var gitReadOnly = set("status", "diff", "log", "show", "blame", "annotate", "grep", "rev-parse", "ls-files", "ls-tree",
	"cat-file", "describe", "shortlog", "rev-list", "merge-base", "name-rev", "for-each-ref", "show-ref", "show-branch",
	"count-objects", "diff-tree", "diff-index", "diff-files", "cherry", "range-diff", "whatchanged", "check-ignore",
	"check-attr", "check-ref-format", "var", "version", "verify-commit", "verify-tag", "ls-remote")

func git(c *cmd) cwdSet {
	dirs := c.cwds    // where git looks for the repository
	var gitDirs []arg // --git-dir, --work-tree
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known {
			c.ask("takes an option known only when it runs (" + a.text() + ")")
			return c.cwds
		}
		name, val, eq := strings.Cut(a.s, "=")
		switch {
		case a.s == "-C":
			if i+1 < len(c.args) {
				i++
				dirs = chdir(dirs, c.args[i])
			}
			continue
		case name == "--git-dir" || name == "--work-tree":
			switch {
			case eq:
				gitDirs = append(gitDirs, literal(val))
			case i+1 < len(c.args):
				i++
				gitDirs = append(gitDirs, c.args[i])
			}
			continue
		case a.s == "--namespace":
			i++
			continue
		case a.s == "-c" || name == "--config-env" || strings.HasPrefix(a.s, "--exec-path="):
			c.ask("sets git configuration, which can run programs")
			return c.cwds
		case a.s == "--version" || a.s == "--help" || a.s == "-h" || a.s == "--exec-path" || a.s == "--html-path":
			return c.cwds
		case strings.HasPrefix(a.s, "-"):
			continue
		}
		break
	}
	if i >= len(c.args) {
		return c.cwds
	}
	sub, rest := c.args[i].s, c.args[i+1:]
	for _, a := range rest {
		if a.known && a.s == "--" {
			break // paths follow
		}
		if a.loose {
			c.ask("takes " + a.text() + ", which may be options (--output=FILE) when it runs")
			return c.cwds
		}
		if !a.known {
			continue
		}
		name, _, _ := strings.Cut(a.s, "=")
		cluster := len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-'
		if matches(name, []string{"--output", "--open-files-in-pager"}) || a.s == "-O" ||
			sub == "grep" && cluster && strings.Contains(a.s, "O") ||
			sub == "ls-remote" && matches(name, []string{"--upload-pack", "--exec"}) {
			c.ask("writes its output to a file or runs a program")
			return c.cwds
		}
	}
	if !gitReadOnly[sub] && !gitReads(sub, rest) {
		c.ask("may change the repository or files")
		return c.cwds
	}
	// The repository's configuration can run programs (core.fsmonitor,
	// core.pager, diff.external): one under the scratch list could have
	// been written without asking.
	for _, d := range dirs {
		if d == "" || c.w.c.InScratch(d) {
			c.ask("runs in a repository its configuration from " + describeDir(d) + " could make run programs")
			return c.cwds
		}
	}
	for _, g := range gitDirs {
		for _, d := range dirs {
			if p := under(literal(d), g); !g.known || filepath.IsAbs(g.s) && c.w.c.InScratch(g.s) || !filepath.IsAbs(g.s) && c.w.c.InScratch(p.s) {
				c.ask("uses the repository " + g.text() + ", whose configuration could make it run programs")
				return c.cwds
			}
		}
	}
	return c.cwds
}

func describeDir(d string) string {
	if d == "" {
		return "a directory not known before it runs"
	}
	return d + " (in the scratch list)"
}

// gitReads reports whether a subcommand that can both list and change
// only lists with these arguments.
func gitReads(sub string, rest []arg) bool {
	opts, ops := parse(rest, "")
	anyOpt := func(names ...string) bool { return has(opts, names...) }
	first := ""
	if len(ops) > 0 {
		if !ops[0].known {
			return false
		}
		first = ops[0].s
	}
	switch sub {
	case "branch":
		if anyOpt("-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "-t", "--delete", "--move", "--copy", "--force",
			"--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track") {
			return false
		}
		return len(ops) == 0 || anyOpt("-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
	case "tag":
		if anyOpt("-d", "-a", "-s", "-u", "-f", "-m", "-F", "-e", "--delete", "--annotate", "--sign", "--force", "--edit") {
			return false
		}
		return len(ops) == 0 || anyOpt("-l", "--list", "-v", "--verify", "--contains", "--points-at")
	case "remote":
		return len(ops) == 0 || first == "show" || first == "get-url"
	case "stash", "worktree", "notes":
		return first == "list" || first == "show"
	case "submodule":
		return first == "status" || first == "summary"
	case "reflog":
		return first == "" || first == "show"
	case "help": // a page is shown by man, info or a browser: programs that may write
		return len(ops) == 0 || anyOpt("-a", "--all", "-g", "--guides", "-c", "--config")
	case "config":
		if anyOpt("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list") {
			return !anyOpt("-e", "--edit")
		}
		if first == "get" || first == "list" {
			return true
		}
		return len(ops) == 1 && first != "set" && first != "unset" && first != "edit" && first != "rename-section" &&
			first != "remove-section" && !anyOpt("-e", "--edit", "--unset", "--unset-all", "--add", "--replace-all",
			"--rename-section", "--remove-section")
	case "symbolic-ref":
		return len(ops) == 1 && !anyOpt("-d", "--delete")
	}
	return false
}

// goCmd: go version, help, env (without -w/-u) and doc (without -http,
// which builds and runs a server) write nothing, but for the toolchain a
// go.mod may make them fetch. Go's flags take one dash or two and =value.
func goCmd(c *cmd) cwdSet {
	_, ops := parse(c.args, "")
	if len(ops) == 0 {
		return c.cwds
	}
	flags := map[string]bool{}
	for _, a := range c.args {
		if a.known && strings.HasPrefix(a.s, "-") {
			name, _, _ := strings.Cut(strings.TrimLeft(a.s, "-"), "=")
			flags[name] = true
		}
	}
	if sub := ops[0]; sub.known {
		switch {
		case sub.s == "help":
			return c.cwds
		case sub.s == "version" || sub.s == "env" && !flags["w"] && !flags["u"] || sub.s == "doc" && !flags["http"]:
			// These too switch to the toolchain a go.mod names, downloading
			// and running it: one under the scratch list could name any.
			for _, d := range c.cwds {
				if d == "" || c.w.c.InScratch(d) {
					c.ask("runs in " + describeDir(d) + ", where a go.mod could name a toolchain to download and run")
					return c.cwds
				}
			}
			return c.cwds
		}
	}
	c.ask("may write files (build outputs, caches, go.mod)")
	return c.cwds
}

// tarShort and tarLong are tar's options that take a value.
const tarShort = "bCfFgHIKLNTVX"

var tarLong = []string{"--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--use-compress-program",
	"--to-command", "--listed-incremental", "--index-file", "--volno-file", "--info-script", "--new-volume-script",
	"--rmt-command", "--rsh-command", "--checkpoint-action", "--transform", "--xform", "--owner", "--group", "--mode",
	"--format", "--label", "--suffix", "--newer", "--after-date", "--newer-mtime", "--blocking-factor", "--record-size",
	"--tape-length", "--starting-file", "--strip-components", "--level", "--warning", "--sort"}

// tar: listing reads; creating writes its archive (and --remove-files
// its files); extracting writes into its -C directories (each relative to
// the one before) or the current one.
func tar(c *cmd) cwdSet {
	if len(c.args) == 0 {
		return c.cwds
	}
	args := c.args
	// The old style: a first word of bundled letters without a dash (czf
	// out.tgz); the letters that take a value take the next words in turn.
	if first := args[0]; first.known && !strings.HasPrefix(first.s, "-") {
		var out []arg
		next := 1
		for _, ch := range first.s {
			out = append(out, literal("-"+string(ch)))
			if strings.ContainsRune(tarShort, ch) && next < len(args) {
				out = append(out, args[next])
				next++
			}
		}
		args = append(out, args[next:]...)
	}
	opts, ops := parse(args, tarShort, tarLong...)
	if has(opts, "--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script", "-F",
		"--new-volume-script", "--rmt-command", "--rsh-command") {
		c.ask("runs a program")
	}
	c.writes(vals(opts, "-g", "--listed-incremental", "--index-file", "--volno-file")...)
	// An archive named host:file is read or written through rsh (or ssh).
	for _, f := range vals(opts, "-f", "--file") {
		if host, _, remote := strings.Cut(f.s, ":"); remote && !strings.Contains(host, "/") && !has(opts, "--force-local") {
			c.ask("reaches the archive " + f.s + " on another host through rsh or ssh")
		}
	}
	switch {
	case has(opts, "-t", "--list", "-d", "--diff", "--compare"):
	case has(opts, "-x", "--extract", "--get"):
		if has(opts, "-P", "--absolute-names") {
			c.ask("extracts members by their absolute names")
		}
		if has(opts, "-O", "--to-stdout") {
			break
		}
		var dirs []arg
		cur := literal(".")
		for _, d := range vals(opts, "-C", "--directory") {
			cur = under(cur, d)
			if d.known && filepath.IsAbs(d.s) {
				cur = d
			}
			dirs = append(dirs, cur)
		}
		if len(dirs) == 0 {
			dirs = []arg{cur}
		}
		// --one-top-level=DIR extracts into DIR, an absolute one anywhere.
		for _, d := range vals(opts, "--one-top-level") {
			if d.known && d.s != "" {
				dirs = append(dirs, under(cur, d))
				if filepath.IsAbs(d.s) {
					dirs = append(dirs, d)
				}
			}
		}
		c.writes(dirs...)
	default: // create, append, update, delete
		files := vals(opts, "-f", "--file")
		if len(files) == 0 {
			files = []arg{{src: "the default archive"}}
		}
		for _, f := range files {
			if f.known && f.s == "-" {
				continue
			}
			c.writes(f)
		}
		if has(opts, "--remove-files") {
			if has(opts, "-C", "--directory", "-T", "--files-from") {
				c.ask("removes the files it archives, from a -C directory or a list")
			}
			c.writes(ops...)
		}
	}
	return c.cwds
}

// unzip: its options come before the archive; after it only -x and -d are
// options, the rest name members. -: lets member paths climb out with ..
func unzip(c *cmd) cwdSet {
	opts, rest := leading(c.args, "dxP")
	if has(opts, "-:") {
		c.ask("extracts member paths with .. in them")
	}
	if has(opts, "-l", "-t", "-v", "-Z", "-p", "-z", "-c") {
		return c.cwds
	}
	dirs := vals(opts, "-d")
	for i, a := range rest {
		switch {
		case !a.known:
		case a.s == "-d" && i+1 < len(rest):
			dirs = append(dirs, rest[i+1])
		case strings.HasPrefix(a.s, "-d") && len(a.s) > 2:
			dirs = append(dirs, literal(a.s[2:]))
		}
	}
	if len(dirs) == 0 {
		dirs = []arg{literal(".")}
	}
	c.writes(dirs...)
	return c.cwds
}

// mktemp creates its file in $TMPDIR (/tmp) with -t, --tmpdir or no
// template, in the -p directory (its template may climb out with ..), or
// where its template says.
func mktemp(c *cmd) cwdSet {
	opts, ops := parse(c.args, "p", "--suffix")
	if has(opts, "-u", "--dry-run") {
		return c.cwds
	}
	template := literal("tmp.XXXXXXXXXX")
	if len(ops) > 0 {
		template = ops[0]
	}
	var dir arg
	inTmp := has(opts, "-t", "--tmpdir", "-p") || len(ops) == 0
	for _, d := range vals(opts, "-p", "--tmpdir") {
		if d.known && d.s != "" || !d.known && d.node != nil {
			dir = d // a given directory; -p "" and a bare --tmpdir mean $TMPDIR
		}
	}
	if !inTmp {
		c.writes(template)
		return c.cwds
	}
	if !dir.known && dir.node == nil {
		tmp, ok := c.w.known("TMPDIR")
		if !ok {
			tmp = "/tmp"
		}
		dir = arg{s: tmp, known: true, src: "$TMPDIR"}
	}
	c.writes(under(dir, template))
	return c.cwds
}

// split writes PREFIXaa, PREFIXab, … (x… in the current directory).
func split(c *cmd) cwdSet {
	opts, ops := parse(c.args, "abClnt", "--suffix-length", "--bytes", "--line-bytes", "--lines", "--number", "--separator",
		"--filter", "--additional-suffix")
	if has(opts, "--filter") {
		c.ask("runs a filter command")
		return c.cwds
	}
	prefix := literal("x")
	if len(ops) > 1 {
		prefix = ops[1]
	}
	if prefix.known {
		prefix.s += "aa"
	}
	c.writes(prefix)
	return c.cwds
}

// compress: gzip FILE replaces FILE with FILE.gz; -c, -l and -t write to
// stdout or nowhere (lz4's -l is its legacy format, not a listing); -o and
// zstd's --output-dir-* name where the output goes.
func compress(c *cmd) cwdSet {
	opts, ops := parse(c.args, "SbTo", "--suffix", "--output", "--output-dir-flat", "--output-dir-mirror", "--filelist")
	if has(opts, "--filelist", "--files", "--files0") { // zstd, xz: the files are named in a file
		c.ask("takes the files it compresses or replaces from a list")
		return c.cwds
	}
	if out := vals(opts, "-o", "--output", "--output-dir-flat", "--output-dir-mirror"); len(out) > 0 {
		c.writes(out...)
		return c.cwds
	}
	if has(opts, "-c", "--stdout", "--to-stdout", "--list", "-t", "--test") || c.name != "lz4" && has(opts, "-l") {
		return c.cwds
	}
	c.writes(ops...)
	return c.cwds
}
