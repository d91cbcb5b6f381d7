package writecheck

import (
	"fmt"
	"strings"
	"testing"
)

func testChecker() Checker {
	return Checker{
		Scratch: []string{"/tmp", "/home/u/.cache/foo"},
		Env:     map[string]string{"HOME": "/home/u", "TMPDIR": "/tmp"},
	}
}

const project = "/work/p"

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		cmd   string
		words string // the words that ask, "|"-separated; "" when nothing asks
	}{
		// Read-only commands and pipelines.
		{"ls -la", ""},
		{"ls -la | grep -i go && cat go.mod", ""},
		{"git status; git diff HEAD", ""},
		{"git -C ../other status --short", ""},
		{"git --no-pager log --oneline -5", ""},
		{"git branch -a", ""},
		{"git config user.name", ""},
		{"rg -n foo internal | head", ""},
		{"find . -name '*.go' -type f", ""},
		{"sed -n 1,20p file.go", ""},
		{"sort -u names.txt | uniq -c", ""},
		{"jq .name package.json", ""},
		{"awk '{print $1}' f", ""},
		{"echo $(date) $((1+2))", ""},
		{"for f in *.go; do wc -l \"$f\"; done", ""},
		{"if test -f x; then cat x; else echo none; fi", ""},
		{"command -v go", ""},
		{"xargs grep -l TODO < list", ""},
		{"find . -name '*.go' -exec grep -l TODO {} +", ""},
		{"export FOO=bar", ""},

		// Redirections.
		{"echo x > /tmp/a", ""},
		{"echo x >> $TMPDIR/log", ""},
		{`echo x > "$TMPDIR/a b"`, ""},
		{"cmd 2>/dev/null; ls", "cmd"},
		{"ls 2>/dev/null", ""},
		{"ls >/dev/null 2>&1", ""},
		{"ls 1>&2", ""},
		{"ls >&-", ""},
		{"echo x > f", "echo"},
		{"echo x >| f", "echo"},
		{"ls &> out.log", "ls"},
		{"cat <> f", "cat"},
		{"echo x > $OUT", "echo"},
		{"echo x > ~/.bashrc", "echo"},
		{"echo x > ~/.cache/foo/a", ""},
		{"echo x >& out", "echo"},
		{"{ ls; pwd; } > listing", ">"},
		{"cat <<EOF > /tmp/notes\nhello $USER\nEOF", ""},
		{"cat <<EOF > notes.md\nhello\nEOF", "cat"},
		{"cat <<EOF\n$(rm -rf build)\nEOF", "rm"},
		{"ls > /tmp/../etc/x", "ls"},

		// Substitutions, subshells, functions.
		{"echo $(touch x)", "touch"},
		{"echo `rm -f y`", "rm"},
		{"diff <(ls) <(ls /tmp)", ""},
		{"tee >(grep x > out) < in", "grep|tee"},
		{"(cd /tmp && rm -rf build)", ""},
		{"(cd /tmp); rm -rf build", "rm"},
		{"cd /tmp && rm -rf build", ""},
		{"cd /tmp; rm -rf build", "rm"},
		{"cd x && rm y", "rm"},
		{"cd $DIR && rm y", "rm"},
		{"cd /tmp/w && touch a && cd .. && touch b", ""},
		{"f() { rm -rf /tmp/x; }; f", ""},
		{"f() { rm -rf build; }; f", "rm"},
		{"ls | xargs rm", "rm"},
		{"bash -c 'rm -rf build'", "rm"},
		{"bash -c 'ls /tmp'", ""},
		{"eval 'echo hi > f'", "echo"},
		{"bash script.sh", "bash"},
		{"trap 'rm -f build.lock' EXIT", "rm"},
		{"while true; do cd sub; touch x; done", "touch"},

		// File-writing commands.
		{"rm -rf /tmp/build", ""},
		{"rm -rf build", "rm"},
		{"rm /tmp/*.log", ""},
		{"rm /t*/x", "rm"},
		{"rm /tmp/{a,b}", ""},
		{"rm {/tmp,/work}/x", "rm"},
		{"mkdir -p /tmp/a/b && cp f /tmp/a/b/", ""},
		{"cp /tmp/a f", "cp"},
		{"cp -t /tmp a b", ""},
		{"cp -r src /tmp/copy", "cp"},
		{"cp -r /tmp/src /tmp/copy", ""},
		{"mv /tmp/a /tmp/b", ""},
		{"mv f /tmp/f", "mv"},
		{"ln -s /work/p/f /tmp/link", "ln"},
		{"ln -s /tmp/a /tmp/b", ""},
		{"touch -d yesterday /tmp/stamp", ""},
		{"chmod -R 755 /tmp/x", ""},
		{"chmod -w f", "chmod"},
		{"chmod +x /tmp/run.sh", ""},
		{"install -m 755 bin/app /tmp/app", ""},
		{"echo x | tee /tmp/a /tmp/b", ""},
		{"echo x | tee out", "tee"},
		{"dd if=/dev/zero of=/tmp/img bs=1k count=1", ""},
		{"dd if=/dev/zero of=disk.img", "dd"},
		{"sed -i 's/a/b/' f.go", "sed"},
		{"sed -i.bak 's/a/b/' /tmp/f", ""},
		{"sed -ni 's/a/b/p' f", "sed"},
		{"sed 's/a/b/w out' f", "sed"},
		{"sort -o sorted.txt in.txt", "sort"},
		{"sort -o /tmp/s in.txt", ""},
		{"uniq in out", "uniq"},
		{"mktemp", ""},
		{"mktemp -d", ""},
		{"mktemp build.XXXX", "mktemp"},
		{"tar -tzf a.tgz", ""},
		{"tar czf /tmp/a.tgz src", ""},
		{"tar xzf a.tgz", "tar"},
		{"tar xzf a.tgz -C /tmp/out", ""},
		{"gzip -c f > /tmp/f.gz", ""},
		{"gzip f", "gzip"},
		{"find . -name '*.o' -delete", "find"},
		{"find /tmp -name '*.o' -delete", ""},
		{"find . -exec rm {} \\;", "rm"},
		{"find . -fprint list.txt", "find"},
		{"awk '{print > \"out\"}' f", "awk"},
		{"awk 'BEGIN{system(\"rm x\")}'", "awk"},
		{"env FOO=1 rm x", "rm"},
		{"env PATH=/tmp/evil ls", "PATH="},
		{"PATH=/tmp/evil:$PATH ls", "PATH="},
		{"export PATH=/tmp/bin:$PATH", "export"},
		{"timeout 5 rm x", "rm"},
		{"nice -n 5 make", "make"},
		{"/usr/bin/rm /tmp/x", ""},
		{"./rm /tmp/x", "./rm"},

		// Unknown commands and git subcommands.
		{"make", "make"},
		{"ls && make test", "make"},
		{"python3 -c 'print(1)'", "python3"},
		{"git commit -m x", "git commit"},
		{"git push origin main", "git push"},
		{"git branch new-feature", "git branch"},
		{"git -c core.fsmonitor=evil status", "git status"},
		{"git log --output=log.txt", "git log"},
		{"go test ./...", "go test"},
		{"go version", ""},
		{"$CMD x", "$CMD"},
		{"sudo rm x", "sudo"},

		// Holes found by review: each wrote outside the scratch list without asking.
		// Options that run or write after the command word, or after operands.
		{"command rm -rf build -v", "rm"},
		{"jobs -x rm -rf build", "rm"},
		{"jobs -l", ""},
		{"compgen -C 'rm -rf build' x", "compgen"},
		{"rm() { :; }; command rm -rf build", "rm()|rm"},
		{"touch() { :; }; env touch /work/p/x", "touch()|touch"},
		{"env -S'rm -rf build'", "env"},
		{"cd /tmp && env -C/work/p rm -rf build", "rm"},
		{"/usr/bin/time -o/work/p/timing ls", "time"},
		{"timeout --signal KILL 5 ls", ""},
		{"sort --out=/work/p/x in", "sort"},
		{"date --se=2020-01-01", "date"},
		{"ag --pager 'rm -rf build' foo", "ag"},
		{"tree -R -L 2 -H .", "tree"},
		{"sdiff --diff-program=/tmp/evil a b", "sdiff"},
		{"sdiff -o /tmp/m a b", "sdiff"},
		{"yq -s '.a' f.yaml", "yq"},
		{"rg --hostname-bin=/tmp/evil foo", "rg"},
		{"uniq --skip-fields 1 /tmp/in out", "uniq"},
		{"xxd -len 10 /tmp/in out", "xxd"},
		{"xxd -r /tmp/h /tmp/b", ""},
		{"hostname -F /work/p/x", "hostname"},
		{"install -s --strip-program=/tmp/evil a /tmp/b", "install"},
		{"zstdcat -o /work/p/x /tmp/in.zst", "zstdcat"},
		{"zstdcat /tmp/in.zst", ""},
		{"zstd --output-dir-flat=/work/p /tmp/in", "zstd"},
		{"lz4 -l f", "lz4"},
		{"zsh -c 'ls'", "zsh"},
		// Variables the line assigns in ways other than NAME=value.
		{"printf -v TMPDIR /work/p; touch $TMPDIR/x", "printf|touch"},
		{"printf -v out '%s' x", ""},
		{"read TMPDIR <<< /work/p; touch $TMPDIR/x", "read|touch"},
		{"IFS=, read -r a b <<< 'x,y'", ""},
		{"for TMPDIR in /work/p; do touch $TMPDIR/x; done", "for|touch"},
		{"for f in a b; do echo $f; done", ""},
		{"unset TMPDIR; touch $TMPDIR/x", "touch"},
		{"declare -n r=TMPDIR; r=/work/p; touch $TMPDIR/x", "declare|r=|touch"},
		{"X=PATH=/tmp/evil; declare \"$X\"; ls", "declare"},
		{"builtin export PATH=/tmp/evil; ls", "export"},
		{"((HOME=0)); touch ~/.cache/foo/x", "HOME=|touch"},
		{"let HOME=0", "HOME="},
		{": ${CDPATH:=/work}", "CDPATH="},
		{"IFS=/; touch $TMPDIR", "IFS=|touch"},
		{"set -k; git status GIT_CONFIG_PARAMETERS=x", "set"},
		{"set -o keyword", "set"},
		{"set -eu", ""},
		{"CDPATH=/work; cd /tmp && cd p && rm -rf build", "CDPATH="},
		{"GIT_TRACE=/work/p/x git status", "GIT_TRACE="},
		{"GIT_EXTERNAL_DIFF=/tmp/evil git diff", "GIT_EXTERNAL_DIFF="},
		{"XDG_CONFIG_HOME=/tmp/x git status", "XDG_CONFIG_HOME="},
		{"RIPGREP_CONFIG_PATH=/tmp/rc rg foo", "RIPGREP_CONFIG_PATH="},
		{"TAR_OPTIONS=--to-command=sh tar -tf /tmp/a.tar", "TAR_OPTIONS="},
		{"cd /tmp && dd if=/dev/zero of=~/x count=1", "dd"},
		// Words known only when the command runs can be options or several words.
		{"X='-o /work/p/x'; sort $X in", "sort"},
		{"X='-t /work/p'; cp $X /tmp/a", "cp"},
		{"f=-t/work/p; cp \"$f\" /tmp/a", "cp"},
		{"cp \"/tmp/$f\" /tmp/a", ""},
		{"timeout $D ls", "timeout"},
		{"echo '-o /work/p/x' | xargs sort in", "sort"},
		{"find /work/p $ACT", "find"},
		{"find . -name $PAT", "find"},
		{"find . -name \"$PAT\"", ""},
		{"echo {1..100000000} > /dev/null", ""},
		// sed scripts and awk programs.
		{"sed 's:a:b:w /work/p/x' f", "sed"},
		{"sed -n '0~1w /work/p/x' f", "sed"},
		{"sed -n '1,+3w /work/p/x' f", "sed"},
		{"sed 's/x/y/eg' f", "sed"},
		{"sed 's/x/y/ew /work/p/out' f", "sed"},
		{"sed -n '\\%x%w /work/p/x' f", "sed"},
		{"sed -n '/a/,/b/ { /c/ w /work/p/x\n}' f", "sed"},
		{"sed -n 'w /tmp/out' f", ""},
		{"sed 's/a/b/g;s:x:y:;/w/d;y/abc/xyz/' f", ""},
		{"sed '1a hello; w x' f", ""},
		{"awk 'BEGIN{\"touch /work/p/x\" |& getline}'", "awk"},
		{"awk '@include \"/tmp/x.awk\"'", "awk"},
		{"awk 'BEGIN{f=\"system\"; @f(\"rm x\")}'", "awk"},
		{"awk --source='BEGIN{system(\"rm -rf build\")}'", "awk"},
		{"awk -e 'BEGIN{print 1}' -e 'BEGIN{system(\"rm\")}'", "awk"},
		{"awk --profile '{print}' /tmp/f", "awk"},
		{"awk -W exec /tmp/x.awk", "awk"},
		{"awk -F@ '{print $2}' f", ""},
		// Commands run on found paths or input words.
		{"fd -Hx rm", "rm"},
		{"fd --exec=rm", "rm"},
		{"fd -e go", ""},
		{"cd /tmp && fd --base-directory /work/p -x sh -c 'touch marker'", "touch"},
		{"cd /tmp && ls /work/p | xargs -I F rm /tmp/F", "rm"},
		// Where later commands run.
		{"f() { cd /work/p; }; cd /tmp && f && rm -rf build", "rm"},
		{"f() { ls; }; cd /tmp && f && rm -rf build", ""},
		{"cd /tmp && eval 'cd /work/p' && rm -rf build", "rm"},
		{"cd /tmp && trap 'cd /work/p' DEBUG && rm -rf build", "trap|rm"},
		{"nice cd /tmp && rm -rf build", "rm"},
		{"cd /tmp && echo | cd /work/p && rm -rf build", "rm"},
		{"pushd -n /tmp && rm -rf build", "rm"},
		{"cd /tmp && pushd /work/p && pushd && rm -rf build", "rm"},
		// git reads a repository's configuration, which can run programs.
		{"git -C /tmp/evil status", "git status"},
		{"cd /tmp/r && git log", "git log"},
		{"git --git-dir=/tmp/evil/.git log", "git log"},
		{"git -C /work/p status", ""},
		{"git grep -Ovim x", "git grep"},
		{"git grep -nO x", "git grep"},
		{"git ls-remote --upload-pack='touch /work/p/x' .", "git ls-remote"},
		{"git log --out=/work/p/x", "git log"},
		{"git help commit", "git help"},
		{"git help -a", ""},
		{"go env --w GOFLAGS=-x", "go env"},
		{"go doc -http", "go doc"},
		{"go doc fmt.Println", ""},
		{"cd /tmp/x && go version", "go version"},
		{"cd /tmp/x && go help build", ""},
		// Archives and file-making commands.
		{"tar -xPf /tmp/a.tar -C /tmp/out", "tar"},
		{"tar -czf /tmp/a.tgz --remove-files src", "tar"},
		{"tar -cf /tmp/a.tar -g /work/p/snap /tmp/src", "tar"},
		{"cd /tmp && tar xfC /tmp/a.tar /work/p", "tar"},
		{"cd /tmp/x && tar xf /tmp/a.tar -C .. -C ../work/p", "tar"},
		{"tar xf /tmp/a.tar -C /tmp/out -C sub", ""},
		{"unzip -: /tmp/a.zip -d /tmp/x", "unzip"},
		{"unzip -o /tmp/z.zip f -l", "unzip"},
		{"unzip -l /tmp/z.zip", ""},
		{"mktemp -p /tmp ../work/p/x.XXXX", "mktemp"},
		{"mktemp -p /tmp x.XXXX", ""},
		{"cd /tmp/a/b && ln -s ../../work/p /tmp/x/link", "ln"},
		{"cd /tmp/a/b && cp --parents ../../../work/p/x /tmp/d", "cp"},

		{"cd /work/p && ! cd /tmp/nope && rm -rf build", "rm"},
		{"read 'a[$(touch /work/p/x)]' <<< 1", "read"},
		{"printf -v 'b[$(touch /work/p/x)]' x", "printf"},
		{"declare \"d[\\$(touch /work/p/x)]=1\"", "declare"},
		{"read -a arr <<< 'a b'; read 'arr[1]' <<< c", ""},
		{"tar xf /tmp/a.tar -C /tmp/out --one-top-level=/work/p/x", "tar"},
		{"UNZIP=-: unzip /tmp/a.zip -d /tmp/x", "UNZIP="},
		{"cd /tmp/w && sort * /work/p/data", "sort"},
		{"cd /tmp/w && sed -n p *", "sed"},
		{"sed -n 1p *.go", ""},
		{"cd /tmp/w && rm -f *.log", ""},
		{"/usr/bin/ls() { cd /work/p; }", "/usr/bin/ls()"},
		{"ls | xargs -Eexit rm", "rm"},
		{"xargs -i rm /tmp/{}", "rm"},
		{"fd -tx", ""},
		{"complete -D -C 'rm -rf build' x", "complete"},
		{"cd /tmp && sed -n 's/[/]/g;w a/w /work/p/x' f", "sed"},
		{"sed 's/[^/]*$//' f", ""},
		{"awk 'BEGIN { print \"x\" \\\n> \"/work/p/x\" }'", "awk"},
		{"echo ${!x}", "${!x}"},
		{"echo ${!prefix*} ${!arr[@]}", ""},
		{"[[ -v $z ]]", "[["},
		{"[[ -v HOME && -v 'a[1]' ]]", ""},
		{"test -v \"$z\"", "test"},
		{"[ -v \"$z\" ]", "["},
		{"[ -f \"$f\" ] && test -n \"$x\"", ""},
		{"compgen -W '$(rm -rf build)' x", "rm"},
		{"compgen -W \"$x\" y", "compgen"},
		{"compgen -W 'start stop' st", ""},
		{"for i in {0..3}; do echo \"${a[i]}\" $((i + 1)); done", ""},
		{"for i in $(cat /tmp/n); do echo $((i + 1)); done", "$(("},
		{"false && i=0; echo $((i))", "$(("},
		{"if false; then i=0; fi; echo $((i))", "$(("},
		{"i=0; while ((i < 3)); do i=$(cat /tmp/n); done", "$(("},
		{"i=0; while ((i < 3)); do ((i++)); done", ""},
		{"(i=0); echo $((i))", "$(("},
		{"env FOO=\"$x\" ls", ""},
		{"env GIT_DIR=\"$x\" git status", "GIT_DIR="},
		{"cnt=0; for f in *.go; do cnt=$((cnt + 1)); done; echo $cnt", ""},
		{"truncate -s $S /tmp/x", "truncate"},
		{"chmod $m /tmp/x", "chmod"},
		{"cd /tmp && mv * /tmp/dst/", "mv"},
		{"cd /tmp/w && chmod 644 *", ""},
		{"git log $X", "git log"},
		{"git log -- \"$f\"", ""},
		{"read -p $P x", "read"},
		{"[ -f $f ]", "["},
		{"[ -f \"$f\" ] && [ \"$a\" = \"$b\" ]", ""},
		{"cd /tmp && echo hi > {/work/p/x,}", "echo"},
		{"declare {PATH,x}=/tmp/evil", "declare"},
		{"zstd --filelist /tmp/list", "zstd"},
		{"xz --files=/tmp/list", "xz"},
		{"tar -cf /tmp/a.tar -T /tmp/list --remove-files", "tar"},
		{"tar -tf host:/x.tar", "tar"},
		{"tar -tf /tmp/a:b.tar", ""},
		// The session is one shell: what a line leaves set works on later lines.
		{"ls() { cd /work/p; }", "ls()"},
		{"trap 'cd /work/p' DEBUG", "trap"},
		{"trap 'rm -f /tmp/lock' EXIT", ""},
		{"IFS=/", "IFS="},
		{"shopt -s cdable_vars", "shopt"},
		{"shopt -s nullglob", "shopt"},
		{"shopt -s globstar dotglob", ""},
		{"declare -n r", "declare"},
		{"export -n FOO", ""},
		{"declare -i n", "declare"},
		{"set -o posix", "set"},
		{"PWD=/tmp", "PWD="},
		{"read PWD <<< /tmp", "read"},
		{"set -o nounset -o keyword", "set"},
		{"set -euo pipefail -- a b", ""},
		{"BASH_CMDS[ls]=/tmp/evil; ls", "$((|BASH_CMDS="},
		{"EXECIGNORE=/usr/bin/ls", "EXECIGNORE="},
		{"export NODE_OPTIONS='--require /tmp/x.js'", "export"},
		{"coproc TMPDIR { sleep 1; }; touch $TMPDIR/x", "coproc|touch"},
		{"coproc { sleep 1; }", ""},
		{"sleep 1 & wait -n -p TMPDIR; touch $TMPDIR/x", "wait|touch"},
		{"sleep 1 & wait $!", ""},
		{"wait $X", "wait"},
		{"XZ_OPT=--files=/tmp/list xz /tmp/f", "XZ_OPT="},
		// Arithmetic evaluates values as expressions: a[$(cmd)] runs cmd.
		{"x='a[$(touch /work/p/pwn)]'; echo $((x))", "$(("},
		{"[[ $x -eq 1 ]]", "$(("},
		{"echo ${a[x]}", "$(("},
		{"echo \"${x@P}\"", "${@P}"},
		{"for ((i=0; i<10; i++)); do echo $i; done", ""},
		{"n=3; echo $((n * 2)) ${#n} $(( $# + 1 ))", ""},
		{"echo \"${arr[@]}\" ${arr[0]} ${s:1:2}", ""},
		{"cd /tmp && find -files0-from /tmp/list -delete", "find"},
		// What cannot be checked asks.
		{"echo 'unclosed", "echo"},
		{"if then fi", "if"},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			got := testChecker().Check(tt.cmd, project)
			var words []string
			for _, r := range got {
				if r.Word == "" || r.Why == "" {
					t.Errorf("a reason without a word or an explanation: %+v", r)
				}
				if !containsWord(words, r.Word) {
					words = append(words, r.Word)
				}
			}
			if g := strings.Join(words, "|"); g != tt.words {
				t.Errorf("Check(%q) asks for %q, want %q\n%s", tt.cmd, g, tt.words, fmt.Sprint(got))
			}
		})
	}
}

func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// An unknown working directory makes every relative write ask; absolute
// scratch paths stay free.
func TestCheckUnknownCwd(t *testing.T) {
	c := testChecker()
	if got := c.Check("touch x", ""); len(got) != 1 || !strings.Contains(got[0].Why, "not known") {
		t.Errorf("relative write with no cwd: %+v", got)
	}
	if got := c.Check("touch /tmp/x", ""); len(got) != 0 {
		t.Errorf("absolute scratch write with no cwd asks: %+v", got)
	}
	if got := c.Check("touch x", "/tmp/work"); len(got) != 0 {
		t.Errorf("relative write in a scratch cwd asks: %+v", got)
	}
}

// The reason names the path and says why.
func TestCheckReasonText(t *testing.T) {
	got := testChecker().Check("cd x && rm -rf build", project)
	if len(got) != 1 || got[0].Word != "rm" || !strings.Contains(got[0].Why, "build") {
		t.Fatalf("got %+v", got)
	}
	got = testChecker().Check("echo 'unclosed", project)
	if len(got) != 1 || !strings.Contains(got[0].Why, "cannot be parsed") {
		t.Fatalf("parse error: %+v", got)
	}
}

func TestInScratch(t *testing.T) {
	c := Checker{Scratch: []string{"/tmp"}}
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/tmp", true}, {"/tmp/a/b", true}, {"/tmpx", false}, {"/tmp/../etc", false},
		{"/dev/null", true}, {"/dev/sda", false}, {"tmp/a", false},
	} {
		if got := c.InScratch(tt.path); got != tt.want {
			t.Errorf("InScratch(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	c.Shadowed = func(p string) bool { return within(p, "/tmp/project") }
	if c.InScratch("/tmp/project/f") || !c.InScratch("/tmp/other") {
		t.Error("a path shadowing the scratch list counts as scratch, or Shadowed hides the rest")
	}
	if got := c.Check("echo x > f", "/tmp/project"); len(got) != 1 {
		t.Errorf("a write in a project under /tmp does not ask: %+v", got)
	}
	if (Checker{}).InScratch("/tmp/a") {
		t.Error("an empty scratch list holds /tmp")
	}
}

// Nested loops and functions each make a trial pass, every `cd x;`
// doubles the directories a line may be in, and braces multiply words: all
// are bounded, so a line a model writes cannot stall the check (40 levels
// took hours before).
func TestCheckNestingIsCheap(t *testing.T) {
	const n = 40
	for _, line := range []string{
		strings.Repeat("while true; do ", n) + "touch x; " + strings.Repeat("done; ", n),
		func() string {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "f%d() { ", i)
			}
			return b.String() + "ls; " + strings.Repeat("}; ", n)
		}(),
		strings.Repeat("cd a || cd b; ", n) + "touch x",
		"touch" + strings.Repeat(" {1..20000}", 200), // 4 million words
	} {
		// Work that doubled per level took hours here: a regression hangs
		// until the test timeout. The cost itself is measured by the
		// benchmarks, not asserted.
		got := testChecker().Check(line, "/tmp")
		if strings.Contains(line, "touch") && len(got) == 0 {
			t.Errorf("%.40q…: a write in a directory no longer known does not ask", line)
		}
	}
}

// Check must not panic or hang on any line a model may write; every
// reason names a word and says why.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"set ''", "sed -n 's/[/]/w a/w o' f", "tar xfC a b", "fd -x", "xargs -i", "find . -exec",
		"awk -W", "git -C", "echo $((a[x]=1))", "declare -n r; r=x", "f() { cd /; }; f", "cp --parents a b",
		"read 'a[$(x)]'", "while :; do cd a; done", "env -C", "unzip -d", "mktemp -p", "printf -v", "x=1 y=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, r := range testChecker().Check(line, project) {
			if r.Word == "" || r.Why == "" {
				t.Errorf("Check(%q): a reason without a word or an explanation: %+v", line, r)
			}
		}
	})
}
