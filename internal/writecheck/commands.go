package writecheck

import (
	"path/filepath"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// readOnly are commands that write no file whatever their arguments
// (their output goes to stdout; redirections are checked apart).
var readOnly = set(
	"ls", "dir", "vdir", "cat", "tac", "head", "tail", "nl", "od", "hexdump", "strings", "wc", "cut", "tr",
	"paste", "column", "fold", "fmt", "expand", "unexpand", "rev", "comm", "join", "seq", "yes", "sleep",
	"grep", "egrep", "fgrep", "zgrep", "zcat", "bzcat", "xzcat", "zstdcat", "ag",
	"diff", "cmp", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum",
	"base64", "base32", "basenc", "jq", "numfmt", "tsort", "look", "factor", "expr",
	"pwd", "echo", "printf", "true", "false", "test", "[", ":", "which", "whereis", "type", "help",
	"stat", "du", "df", "realpath", "readlink", "basename", "dirname", "id", "whoami", "groups", "uname",
	"arch", "nproc", "uptime", "free", "ps", "pgrep", "lscpu", "lsblk", "getconf", "locale", "tty", "printenv",
	"cal", "dirs", "jobs", "wait", "read", "getopts", "set", "shopt", "unset", "shift", "return", "exit",
	"break", "continue", "umask", "ulimit", "unalias", "let", "local", "declare", "typeset", "export", "readonly",
	"compgen", "complete",
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
		w.assign(a, "", cwds, depth)
	}
	if len(x.Args) == 0 {
		return cwds
	}
	return w.run(w.args(x.Args), cwds, depth)
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
// directories it leaves the shell in.
func (w *walker) run(args []arg, cwds cwdSet, depth int) cwdSet {
	if len(args) == 0 {
		return cwds
	}
	if !args[0].known {
		w.ask(args[0].text(), "is a command named only when it runs")
		return cwds
	}
	name := commandName(args[0].s)
	c := &cmd{w: w, name: name, args: args[1:], cwds: cwds, depth: depth}
	switch {
	case w.funcs[name]:
		return cwds // declared above in this line: its body was checked
	case readOnly[name]:
		return cwds
	}
	if h, ok := handlers[name]; ok {
		return h(c)
	}
	c.ask("is not known to only read")
	return cwds
}

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

// opt is one parsed option: "-o" or "--output", with its value if it takes one.
type opt struct {
	name string
	val  arg
}

// parse splits args into options and operands. short lists the short
// options that take a value (attached or the next word), long the long
// ones that take the next word when not written --name=value. A word not
// known before running is an operand; "--" ends the options.
func parse(args []arg, short string, long ...string) (opts []opt, ops []arg) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.known || a.s == "-" || !strings.HasPrefix(a.s, "-"):
			ops = append(ops, a)
		case a.s == "--":
			return opts, append(ops, args[i+1:]...)
		case strings.HasPrefix(a.s, "--"):
			name, val, eq := strings.Cut(a.s, "=")
			o := opt{name: name}
			switch {
			case eq:
				o.val = arg{s: val, known: true, src: val}
			case contains(long, name) && i+1 < len(args):
				i++
				o.val = args[i]
			}
			opts = append(opts, o)
		default:
			for j := 1; j < len(a.s); j++ {
				ch := a.s[j]
				o := opt{name: "-" + string(ch)}
				if strings.IndexByte(short, ch) >= 0 {
					if j+1 < len(a.s) {
						v := a.s[j+1:]
						o.val = arg{s: v, known: true, src: v}
					} else if i+1 < len(args) {
						i++
						o.val = args[i]
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		}
	}
	return opts, ops
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// has reports whether any of names was given.
func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		if contains(names, o.name) {
			return true
		}
	}
	return false
}

// vals are the values given to any of names.
func vals(opts []opt, names ...string) []arg {
	var out []arg
	for _, o := range opts {
		if contains(names, o.name) {
			out = append(out, o.val)
		}
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
	nthOperand := func(short string, n int) func(*cmd) cwdSet {
		return func(c *cmd) cwdSet {
			_, ops := parse(c.args, short)
			if len(ops) > n {
				c.writes(ops[n])
			}
			return c.cwds
		}
	}
	handlers = map[string]func(*cmd) cwdSet{
		"cd": cd, "pushd": cd,
		"popd": func(c *cmd) cwdSet { return cwdSet{""} },

		"rm": operands(""), "rmdir": operands(""), "unlink": operands(""), "shred": operands("ns"),
		"mkdir": operands("m", "--mode"), "mkfifo": operands("m", "--mode"), "touch": operands("drt", "--date", "--reference"),
		"truncate": operands("sr", "--size", "--reference"), "tee": operands(""),
		"mknod": nthOperand("m", 0),
		"chmod": chmod, "chown": chmod, "chgrp": chmod,
		"cp": cp, "mv": mv, "ln": ln, "install": install,
		"dd":   dd,
		"sed":  sed,
		"sort": sortCmd, "shuf": outputOpt("ino", "-o", "--output"),
		"uniq": nthOperand("fsw", 1), "xxd": nthOperand("cglosn", 1),
		"tree":    outputOpt("LPIHTo", "-o"),
		"sdiff":   outputOpt("ow", "-o", "--output"),
		"time":    timeCmd,
		"file":    ifOption("compiles a magic file", "-C", "--compile"),
		"yq":      ifOption("edits files in place", "-i", "--inplace"),
		"rg":      ifOption("runs a preprocessor command", "--pre"),
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
			if _, ops := parse(c.args, "F"); len(ops) > 0 {
				c.ask("sets the host name")
			}
			return c.cwds
		},
		"awk": awk, "gawk": awk, "mawk": awk, "nawk": awk,
		"find": find, "fd": fd, "fdfind": fd,
		"xargs": xargs,
		"env":   env, "command": command, "builtin": wrapper(""), "exec": wrapper("a"),
		"nice": wrapper("n"), "nohup": wrapper(""), "stdbuf": wrapper("ioe"), "setsid": wrapper(""),
		"ionice": wrapper("cnpP"), "timeout": timeout,
		"bash": shell, "sh": shell, "dash": shell, "zsh": shell, "ksh": shell,
		"eval": eval, "trap": trap,
		"git": git, "go": goCmd,
		"tar": tar, "unzip": unzip, "mktemp": mktemp, "split": split,
		"gzip": compress, "gunzip": compress, "bzip2": compress, "bunzip2": compress, "xz": compress,
		"unxz": compress, "zstd": compress, "unzstd": compress, "lz4": compress,
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
			if contains(names, name) || (len(name) > 2 && name[0] == '-' && name[1] != '-' && clusterHas(name, names)) {
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

func cd(c *cmd) cwdSet {
	_, ops := parse(c.args, "")
	if len(ops) == 0 {
		if home, ok := c.w.known("HOME"); ok {
			return cwdSet{home}
		}
		return cwdSet{""}
	}
	d := ops[0]
	if !d.known || d.glob || d.s == "-" || strings.HasPrefix(d.s, "+") {
		return cwdSet{""}
	}
	if filepath.IsAbs(d.s) {
		return cwdSet{filepath.Clean(d.s)}
	}
	var out cwdSet
	for _, cur := range c.cwds {
		if cur == "" {
			out = out.union(cwdSet{""})
			continue
		}
		out = out.union(cwdSet{filepath.Join(cur, d.s)})
	}
	return out
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

// linkFlags make cp carry symbolic links over: a link copied into the
// scratch list from elsewhere would lead a later scratch write out of it.
var cpLinkShort = "adPRrsl"

func cp(c *cmd) cwdSet {
	opts, ops := parse(c.args, "St", "--target-directory", "--suffix")
	targets := vals(opts, "-t", "--target-directory")
	sources := ops
	if len(targets) == 0 && len(ops) > 1 {
		targets, sources = ops[len(ops)-1:], ops[:len(ops)-1]
	}
	c.writes(targets...)
	links := false
	for _, o := range opts {
		if len(o.name) == 2 && strings.IndexByte(cpLinkShort, o.name[1]) >= 0 ||
			contains([]string{"--archive", "--no-dereference", "--recursive", "--symbolic-link", "--link"}, o.name) ||
			o.name == "--preserve" && (strings.Contains(o.val.s, "links") || strings.Contains(o.val.s, "all")) {
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
// list to a file outside it would let a later scratch write reach that file.
func ln(c *cmd) cwdSet {
	opts, ops := parse(c.args, "St", "--target-directory", "--suffix")
	targets := append(vals(opts, "-t", "--target-directory"), ops...)
	if len(ops) == 1 && len(vals(opts, "-t", "--target-directory")) == 0 && ops[0].known {
		// ln TARGET: the link is made in the current directory.
		targets = append(targets, arg{s: filepath.Base(ops[0].s), known: true, src: "."})
	}
	c.writes(targets...)
	return c.cwds
}

func install(c *cmd) cwdSet {
	opts, ops := parse(c.args, "mogSt", "--mode", "--owner", "--group", "--suffix", "--target-directory")
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
			c.writes(arg{s: v, known: true, src: v})
		}
	}
	return c.cwds
}

// sedWrites finds sed's w/W (write a file) and e (run a command) commands
// and s///w, s///e flags. It errs towards finding one.
var sedWrites = regexp.MustCompile(`(^|[;{}\n]|[/|#,!][gpiImM0-9]*|^[0-9$]+)\s*[wWe](\s|$)`)

func sed(c *cmd) cwdSet {
	opts, ops := parse(c.args, "efl", "--expression", "--file", "--line-length")
	inPlace := false
	for _, o := range opts {
		if o.name == "-i" || o.name == "--in-place" {
			inPlace = true
		}
	}
	// -i.bak is parsed as -i then -. -b -a -k: find it in the words.
	for _, a := range c.args {
		if a.known && strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "i") {
			if before, _, _ := strings.Cut(a.s[1:], "i"); strings.Trim(before, "nrEsuz") == "" {
				inPlace = true
			}
		}
	}
	scripts := vals(opts, "-e", "--expression")
	files := ops
	if len(scripts) == 0 && len(vals(opts, "-f", "--file")) == 0 && len(ops) > 0 {
		scripts, files = ops[:1], ops[1:]
	}
	if len(vals(opts, "-f", "--file")) > 0 {
		c.ask("runs a sed script from a file")
	}
	for _, s := range scripts {
		if !s.known || sedWrites.MatchString(s.s) {
			c.ask("its script may write a file or run a command (" + s.text() + ")")
			break
		}
	}
	if inPlace {
		if len(files) == 0 {
			files = append(files, arg{src: "its files"})
		}
		c.writes(files...)
	}
	return c.cwds
}

func sortCmd(c *cmd) cwdSet {
	opts, _ := parse(c.args, "kotST", "--key", "--output", "--field-separator", "--buffer-size", "--temporary-directory")
	c.writes(vals(opts, "-o", "--output")...)
	if has(opts, "--compress-program") {
		c.ask("runs a compression program")
	}
	return c.cwds
}

// awkWrites finds output redirections, pipes to commands and system() in
// an awk program. It errs towards finding one (print (a > b) asks).
var awkWrites = regexp.MustCompile(`system\s*\(|\|\s*getline|\bprintf?\b[^;{}\n]*(>|\|)|@load|\bfflush\b`)

func awk(c *cmd) cwdSet {
	opts, ops := parse(c.args, "fvFiEl", "--file", "--assign", "--field-separator", "--include", "--exec", "--load")
	if len(vals(opts, "-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load")) > 0 {
		c.ask("runs an awk program from a file")
		return c.cwds
	}
	if len(ops) == 0 {
		return c.cwds
	}
	if p := ops[0]; !p.known || awkWrites.MatchString(p.s) {
		c.ask("its program may write a file or run a command")
	}
	return c.cwds
}

// find: -delete removes under its starting points, -fprint* write files,
// -exec and -ok run commands ({} is a found path).
func find(c *cmd) cwdSet {
	var roots []arg
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
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
		roots = []arg{{s: ".", known: true, src: "."}}
	}
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known {
			continue
		}
		switch a.s {
		case "-delete":
			c.writes(roots...)
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(c.args) {
				c.writes(c.args[i+1])
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			var inner []arg
			for ; j < len(c.args); j++ {
				if b := c.args[j]; b.known && (b.s == ";" || b.s == "+") {
					break
				}
				inner = append(inner, placeholder(c.args[j]))
			}
			execCwds := c.cwds
			if strings.HasSuffix(a.s, "dir") {
				execCwds = cwdSet{""}
			}
			c.w.run(inner, execCwds, c.depth)
			i = j
		}
	}
	return c.cwds
}

// placeholder makes {} (a path found at run time) unknown.
func placeholder(a arg) arg {
	if a.known && strings.Contains(a.s, "{}") {
		return unknownArg
	}
	return a
}

// fd runs its -x/-X command on each match.
func fd(c *cmd) cwdSet {
	for i, a := range c.args {
		if a.known && (a.s == "-x" || a.s == "-X" || a.s == "--exec" || a.s == "--exec-batch") {
			var inner []arg
			for _, b := range c.args[i+1:] {
				if b.known && b.s == ";" {
					break
				}
				inner = append(inner, placeholder(b))
			}
			if len(inner) == 0 {
				c.ask("runs a command on each match")
				return c.cwds
			}
			inner = append(inner, unknownArg) // fd appends the path when there is no {}
			c.w.run(inner, c.cwds, c.depth)
			return c.cwds
		}
	}
	return c.cwds
}

// xargs runs its command with words read from stdin.
func xargs(c *cmd) cwdSet {
	i, replace := 0, false
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known || !strings.HasPrefix(a.s, "-") {
			break
		}
		if a.s == "--" {
			i++
			break
		}
		if strings.HasPrefix(a.s, "-I") || strings.HasPrefix(a.s, "-i") || strings.HasPrefix(a.s, "--replace") {
			replace = true
		}
		if len(a.s) == 2 && strings.IndexByte("adEILnPs", a.s[1]) >= 0 {
			i++ // its value is the next word
		}
	}
	inner := c.args[i:]
	if len(inner) == 0 {
		return c.cwds // echo
	}
	out := make([]arg, 0, len(inner)+1)
	for _, a := range inner {
		out = append(out, placeholder(a))
	}
	if !replace {
		out = append(out, unknownArg) // the words read are appended
	}
	c.w.run(out, c.cwds, c.depth)
	return c.cwds
}

// timeCmd is the time program (the shell keyword is a TimeClause): -o
// writes its report to a file.
func timeCmd(c *cmd) cwdSet {
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known || !strings.HasPrefix(a.s, "-") {
			break
		}
		if (a.s == "-o" || a.s == "--output" || a.s == "-f" || a.s == "--format") && i+1 < len(c.args) {
			if a.s == "-o" || a.s == "--output" {
				c.writes(c.args[i+1])
			}
			i++
		} else if v, ok := strings.CutPrefix(a.s, "--output="); ok {
			c.writes(arg{s: v, known: true, src: v})
		}
	}
	return c.w.run(c.args[i:], c.cwds, c.depth)
}

// wrapper returns the handler of a command that runs the rest of its
// words as a command, after its options (short ones in short take a value).
func wrapper(short string) func(*cmd) cwdSet {
	return func(c *cmd) cwdSet {
		i := 0
		for ; i < len(c.args); i++ {
			a := c.args[i]
			if !a.known || !strings.HasPrefix(a.s, "-") {
				break
			}
			if a.s == "--" {
				i++
				break
			}
			if len(a.s) == 2 && strings.IndexByte(short, a.s[1]) >= 0 {
				i++
			}
		}
		return c.w.run(c.args[i:], c.cwds, c.depth)
	}
}

func command(c *cmd) cwdSet {
	for _, a := range c.args {
		if a.known && (a.s == "-v" || a.s == "-V") {
			return c.cwds
		}
	}
	return wrapper("")(c)
}

func timeout(c *cmd) cwdSet {
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known || !strings.HasPrefix(a.s, "-") {
			break
		}
		if a.s == "-s" || a.s == "-k" || a.s == "--signal" || a.s == "--kill-after" {
			i++
		}
	}
	if i < len(c.args) {
		i++ // the duration
	}
	return c.w.run(c.args[i:], c.cwds, c.depth)
}

// env runs a command with a changed environment (and maybe directory).
func env(c *cmd) cwdSet {
	cwds := c.cwds
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known {
			break
		}
		switch {
		case a.s == "--":
			i++
		case a.s == "-u" || a.s == "--unset":
			i++
			continue
		case a.s == "-C" || a.s == "--chdir" || strings.HasPrefix(a.s, "--chdir="):
			cwds = cwdSet{""}
			if a.s == "-C" || a.s == "--chdir" {
				i++
			}
			continue
		case a.s == "-S" || strings.HasPrefix(a.s, "--split-string"):
			c.ask("runs a command from a split string")
			return c.cwds
		case strings.HasPrefix(a.s, "-"):
			continue
		case strings.Contains(a.s, "="):
			name, _, _ := strings.Cut(a.s, "=")
			if dangerousVars[name] || strings.HasPrefix(name, "GIT_CONFIG_") {
				c.w.ask(name+"=", "sets "+name+", which changes what the command runs or where it writes")
			}
			continue
		}
		break
	}
	c.w.run(c.args[i:], cwds, c.depth)
	return c.cwds
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

func eval(c *cmd) cwdSet {
	words := make([]string, 0, len(c.args))
	for _, a := range c.args {
		if !a.known {
			c.ask("evaluates code known only when it runs")
			return c.cwds
		}
		words = append(words, a.s)
	}
	c.w.script(strings.Join(words, " "), c.cwds, c.depth+1)
	return c.cwds
}

// trap's action runs later, from wherever the shell is then.
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
		c.w.script(act.s, cwdSet{""}, c.depth+1)
	}
	return c.cwds
}

// gitReadOnly are git subcommands that change nothing whatever their
// arguments (writing options such as --output are checked apart).
var gitReadOnly = set("status", "diff", "log", "show", "blame", "annotate", "grep", "rev-parse", "ls-files", "ls-tree",
	"cat-file", "describe", "shortlog", "rev-list", "merge-base", "name-rev", "for-each-ref", "show-ref", "show-branch",
	"count-objects", "diff-tree", "diff-index", "diff-files", "cherry", "range-diff", "whatchanged", "check-ignore",
	"check-attr", "check-ref-format", "var", "help", "version", "verify-commit", "verify-tag", "ls-remote")

func git(c *cmd) cwdSet {
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.known {
			c.ask("takes an option known only when it runs (" + a.text() + ")")
			return c.cwds
		}
		switch {
		case a.s == "-C" || a.s == "--git-dir" || a.s == "--work-tree" || a.s == "--namespace":
			i++
			continue
		case a.s == "-c" || a.s == "--config-env" || strings.HasPrefix(a.s, "--config-env=") || strings.HasPrefix(a.s, "--exec-path="):
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
		if a.known && (strings.HasPrefix(a.s, "--output") || a.s == "-O" || strings.HasPrefix(a.s, "--open-files-in-pager")) {
			c.ask("writes its output to a file or runs a program")
			return c.cwds
		}
	}
	if gitReadOnly[sub] || gitReads(sub, rest) {
		return c.cwds
	}
	c.ask("may change the repository or files")
	return c.cwds
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
		if anyOpt("-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy", "--force",
			"--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track") {
			return false
		}
		return len(ops) == 0 || anyOpt("-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
	case "tag":
		if anyOpt("-d", "-a", "-s", "-u", "-f", "-m", "-F", "--delete", "--annotate", "--sign", "--force") {
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
	case "config":
		if anyOpt("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list") {
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

// goReadOnly are go subcommands that write nothing (no build cache either).
var goReadOnly = set("version", "doc", "help")

func goCmd(c *cmd) cwdSet {
	_, ops := parse(c.args, "")
	if len(ops) == 0 {
		return c.cwds
	}
	if ops[0].known && (goReadOnly[ops[0].s] || ops[0].s == "env" && !hasWord(c.args, "-w", "-u")) {
		return c.cwds
	}
	c.ask("may write files (build outputs, caches, go.mod)")
	return c.cwds
}

func hasWord(args []arg, words ...string) bool {
	for _, a := range args {
		if a.known && contains(words, a.s) {
			return true
		}
	}
	return false
}

// tar: listing reads; creating writes its archive; extracting writes into
// its -C directory (or the current one).
func tar(c *cmd) cwdSet {
	if len(c.args) == 0 {
		return c.cwds
	}
	args := c.args
	// The old style: a first word of bundled letters without a dash (czf out.tgz).
	if first := args[0]; first.known && !strings.HasPrefix(first.s, "-") {
		args = append([]arg{{s: "-" + first.s, known: true, src: first.text()}}, args[1:]...)
	}
	opts, _ := parse(args, "fCbHKgTXIV", "--file", "--directory", "--files-from", "--exclude-from", "--use-compress-program", "--to-command")
	switch {
	case has(opts, "--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script", "-F", "--new-volume-script"):
		c.ask("runs a program")
	case has(opts, "-t", "--list", "-d", "--diff", "--compare"):
	case has(opts, "-x", "--extract", "--get"):
		dirs := vals(opts, "-C", "--directory")
		if len(dirs) == 0 {
			dirs = []arg{{s: ".", known: true, src: "."}}
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
	}
	return c.cwds
}

func unzip(c *cmd) cwdSet {
	opts, _ := parse(c.args, "dxP")
	if has(opts, "-l", "-t", "-v", "-Z", "-p", "-z") {
		return c.cwds
	}
	dirs := vals(opts, "-d")
	if len(dirs) == 0 {
		dirs = []arg{{s: ".", known: true, src: "."}}
	}
	c.writes(dirs...)
	return c.cwds
}

// mktemp creates its file in $TMPDIR (/tmp) unless a directory or a
// template with a directory says otherwise.
func mktemp(c *cmd) cwdSet {
	opts, ops := parse(c.args, "p", "--tmpdir", "--suffix")
	if has(opts, "-u", "--dry-run") {
		return c.cwds
	}
	dirs := vals(opts, "-p", "--tmpdir")
	inTmp := has(opts, "-t", "--tmpdir", "-p") || len(ops) == 0
	switch {
	case len(dirs) > 0 && dirs[0].known && dirs[0].s != "":
		c.writes(dirs...)
	case inTmp:
		dir, ok := c.w.known("TMPDIR")
		if !ok {
			dir = "/tmp"
		}
		c.writes(arg{s: dir + "/x", known: true, src: "$TMPDIR"})
	default:
		c.writes(ops...)
	}
	return c.cwds
}

// split writes PREFIXaa, PREFIXab, … (x… in the current directory).
func split(c *cmd) cwdSet {
	opts, ops := parse(c.args, "abClnt", "--suffix-length", "--bytes", "--line-bytes", "--lines", "--number", "--separator")
	if has(opts, "--filter") {
		c.ask("runs a filter command")
		return c.cwds
	}
	prefix := arg{s: "x", known: true, src: "x"}
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
// stdout or nowhere.
func compress(c *cmd) cwdSet {
	opts, ops := parse(c.args, "SbTo", "--suffix", "--output")
	if out := vals(opts, "-o", "--output"); len(out) > 0 {
		c.writes(out...)
		return c.cwds
	}
	if has(opts, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") {
		return c.cwds
	}
	c.writes(ops...)
	return c.cwds
}
