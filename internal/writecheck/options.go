package writecheck

import "strings"

// opt is one parsed option: "-o" or "--output", with its value if it takes one.
type opt struct {
	name string
	val  arg
}

// parse splits args into options and operands, options anywhere (GNU
// tools take them after operands too). short lists the short options that
// take a value (attached or the next word), long the long ones that take
// the next word when not written --name=value; a long option may be
// abbreviated (--out for --output). A word not known before running is
// an operand; "--" ends the options.
func parse(args []arg, short string, long ...string) (opts []opt, ops []arg) {
	return scan(args, false, short, long...)
}

// leading parses the options before the first operand, which starts the
// rest: the programs that run another command (env, nice, time, xargs …)
// and the builtins stop there.
func leading(args []arg, short string, long ...string) (opts []opt, rest []arg) {
	return scan(args, true, short, long...)
}

func scan(args []arg, stop bool, short string, long ...string) (opts []opt, ops []arg) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.known || a.s == "-" || !strings.HasPrefix(a.s, "-"):
			if stop {
				return opts, append(ops, args[i:]...)
			}
			ops = append(ops, a)
		case a.s == "--":
			return opts, append(ops, args[i+1:]...)
		case strings.HasPrefix(a.s, "--"):
			name, val, eq := strings.Cut(a.s, "=")
			o := opt{name: name}
			switch {
			case eq:
				o.val = literal(val)
			case matches(name, long) && i+1 < len(args):
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
						o.val = literal(a.s[j+1:])
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

// matches reports whether the option name as written is one of names: the
// same, or, for a long option, the start of one (getopt_long and git take
// any unambiguous start; an ambiguous one is an error, so counting it as
// each is safe).
func matches(name string, names []string) bool {
	for _, n := range names {
		if name == n || len(name) > 2 && strings.HasPrefix(name, "--") && strings.HasPrefix(n, name) {
			return true
		}
	}
	return false
}

// has reports whether any of names was given.
func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		if matches(o.name, names) {
			return true
		}
	}
	return false
}

// vals are the values given to any of names.
func vals(opts []opt, names ...string) []arg {
	var out []arg
	for _, o := range opts {
		if matches(o.name, names) {
			out = append(out, o.val)
		}
	}
	return out
}
