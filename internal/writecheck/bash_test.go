package writecheck

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Each line runs under the real bash in an empty directory (also HOME);
// when it leaves a file there, Check with an empty scratch list must ask.
// The lines are the shapes where a parser other than bash's may see fewer
// commands (here-documents, comments, continuations, quoting, case, nested
// substitutions) and the ways of writing a file the check knows.
func TestCheckAsksWhenBashWrites(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash")
	}
	for _, line := range []string{
		// Here-documents.
		"cat <<EOF\nhello\nEOF\ntouch m",
		"cat <<-EOF\n\thello\n\tEOF\ntouch m",
		"cat <<EOF; touch m\nbody\nEOF",
		"cat <<EOF >/dev/null\n$(touch m)\nEOF",
		"cat <<'EOF'\n$(touch m)\nEOF\n",
		"cat <<EOF\nEOF \ntouch m\nEOF\n",
		"cat << EOF\nx\n EOF\ntouch m\nEOF\n",
		"x=$(cat <<EOF\nhi\nEOF\n); touch m",
		"cat <<EOF | cat\nhi\nEOF\ntouch m",
		"cat <<E\\OF\n$(touch m)\nEOF\n",
		"cat <<\"EOF\"\nx\nEOF\ntouch m",
		"cat <<A <<B\na\nA\nb\nB\ntouch m",
		": <<'#'\ntouch m\n#\n",
		// Comments and continuations.
		"echo a # ; touch m",
		"echo a#b; touch m",
		"echo $# ; touch m",
		"echo ${#x}; touch m",
		"# comment\ntouch m",
		"echo a \\\n; touch m",
		"tou\\\nch m",
		// Quoting and substitutions.
		"echo 'a'\"b\"; touch m",
		"echo $'a\\'b'; touch m",
		"echo \"$(echo \")\"); touch m\")",
		"echo `echo \\`touch m\\``",
		"echo $(( 1 + $(touch m; echo 1) ))",
		"echo $((1))$(touch m)",
		"echo $( (echo a) ; touch m )",
		"cat <(touch m)",
		"cat <<< $(touch m)",
		": ${x:=$(touch m)}",
		"[[ $(touch m) ]]",
		// case, functions, keywords.
		"case x in x) touch m;; esac",
		"case x in (x) touch m;; esac",
		"case x in x) :;& y) touch m;; esac",
		"function f { touch m; }; f",
		"f() ( touch m ); f",
		"f() if true; then touch m; fi; f",
		"time touch m",
		"! touch m",
		"{touch,m}",
		"exec touch m",
		"coproc touch m; wait",
		// Code run from values and builtins.
		"x='a[$(touch m)]'; echo $((x))",
		"x='a[$(touch m)]'; [[ $x -eq 0 ]]",
		"x='a[$(touch m)]'; echo ${!x}",
		"x='a[$(touch m)]'; test -v \"$x\"",
		"x='$(touch m)'; echo ${x@P}",
		"printf -v 'a[$(touch m)]' x",
		"read 'a[$(touch m)]' <<< 1",
		"declare \"a[\\$(touch m)]=1\"",
		"compgen -W '$(touch m)' x >/dev/null",
		"trap 'touch m' EXIT",
		"eval 'touch m'",
		"eval \"touch\" m",
		"command touch m",
		"builtin eval 'touch m'",
		"jobs -x touch m",
		"command mkdir m -v",
		"compgen -C 'touch m' x >/dev/null",
		"BASH_CMDS[ls]=$(command -v touch); ls m",
		"x='-o m'; sort $x /dev/null",
		"echo '-o m' | xargs sort /dev/null",
		"awk 'BEGIN { print \"x\" \\\n> \"m\" }'",
		// Programs that run others.
		"env touch m", "nice touch m", "timeout 5 touch m", "xargs touch <<< m", "find . -maxdepth 0 -exec touch m \\;",
		"bash -c 'touch m'", "sh -c 'touch m'",
		// Redirections.
		"> m", ">m", "echo>m", "echo 1>m", "echo &>m", "echo >|m", "echo >>m", ":>m", "exec 3>m", "echo >& m",
		"{ :; } >m", "(echo)>m", "if :; then :; fi>m", "for i in 1; do :; done>m", "f(){ :; }>m; f",
		"while false; do :; done>m", "((1))>m", "echo 2>m", ">m echo", "echo >\"m\"", "echo > ~/m", "echo > {m,}",
		"cat <>m",
		// Programs that write.
		"sed -n 'w m' /dev/null", "sed -n 's/[/]/x/w m' /dev/null", "awk 'BEGIN{print > \"m\"}'",
		"sort -o m /dev/null", "sort --out=m /dev/null", "tee m </dev/null", "dd of=m count=0 status=none",
		"cp /dev/null m", "install /dev/null m", "ln -s x m", "mkdir m", "mkfifo m", "truncate -s0 m", "touch -- m",
		"tar cf m /dev/null 2>/dev/null", "echo 41 | xxd -r -p - m", "uniq /dev/null m", "shuf -o m </dev/null",
		"mktemp m.XXX >/dev/null", "gzip -c /dev/null > m", "zstd -q /dev/null -o m", "date > m",
		"printf x > m", "echo x | split - m", "cp --parents /dev/null .",
	} {
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", line)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir}
		_ = cmd.Run() // a line may fail after writing, or write nothing
		cancel()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			continue
		}
		c := Checker{Env: map[string]string{"HOME": dir}}
		if got := c.Check(line, dir); len(got) == 0 {
			t.Errorf("bash -c %q wrote %s, and Check does not ask", line, entries[0].Name())
		}
	}
}
