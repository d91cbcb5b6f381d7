package writecheck

import (
	"strings"
	"testing"
)

// TestAskModeBehaviour is what a user of the ask permission mode relies
// on, whatever the classifier looks like inside: the commands an agent
// runs to look around run without a question, and the ones that may write
// outside the scratch list (here /tmp and ~/.cache/foo, from /work/p) ask,
// remembered by the word "always" names.
func TestAskModeBehaviour(t *testing.T) {
	mustRun := []string{
		// Looking around.
		"ls -la",
		"ls -la | grep -i go && cat go.mod",
		"git status; git diff HEAD",
		"git -C ../other status --short",
		"git --no-pager log --oneline -5",
		"git log -- \"$f\"",
		"git show HEAD~1:go.mod",
		"git branch -a",
		"rg -n foo internal | head",
		"find . -name '*.go' -type f",
		"find . -name '*.go' -exec grep -l TODO {} +",
		"sed -n 1,20p file.go",
		"cat go.mod | sed 's/^/  /'",
		"sort -u names.txt | uniq -c",
		"jq .name package.json",
		"awk '{print $1}' f",
		"wc -l $(git ls-files)",
		"echo $(date) $((1+2))",
		"for f in *.go; do wc -l \"$f\"; done",
		"if test -f x; then cat x; else echo none; fi",
		"[ -f go.mod ] && cat go.mod",
		"command -v go",
		"xargs grep -l TODO < list",
		"diff <(ls) <(ls /tmp)",
		"bash -c 'ls /tmp'",
		"go version",
		"go doc fmt.Println",
		"export FOO=bar",
		"set -euo pipefail",
		// Writing only scratch paths.
		"echo x > /tmp/a",
		"echo x >> $TMPDIR/log",
		"echo x > ~/.cache/foo/a",
		"ls 2>/dev/null",
		"ls >/dev/null 2>&1",
		"cat <<EOF > /tmp/notes\nhello $USER\nEOF",
		"echo x | tee /tmp/a /tmp/b",
		"rm -rf /tmp/build",
		"mkdir -p /tmp/a/b",
		"mv /tmp/a /tmp/b",
		"cp -r /tmp/src /tmp/copy",
		"chmod +x /tmp/run.sh",
		"mktemp -d",
		"cd /tmp && rm -rf build",
		"(cd /tmp && rm -rf build)",
		"cd /tmp/w && touch a && cd .. && touch b",
	}
	for _, cmd := range mustRun {
		if got := testChecker().Check(cmd, project); len(got) != 0 {
			t.Errorf("%q asks, and must run: %+v", cmd, got)
		}
	}

	mustAsk := []struct {
		cmd  string
		word string // a word "always" remembers for it; "" when any will do
	}{
		// Commands that write files.
		{"rm -rf build", "rm"},
		{"cd x && rm y", "rm"},
		{"cd /tmp; rm -rf build", "rm"},
		{"(cd /tmp); rm -rf build", "rm"},
		{"cd $DIR && rm y", "rm"},
		{"touch x", "touch"},
		{"mkdir build", "mkdir"},
		{"cp /tmp/a f", "cp"},
		{"mv f /tmp/f", "mv"},
		{"sed -i 's/a/b/' f.go", ""},
		{"find . -name '*.o' -delete", "find"},
		{"find . -exec rm {} \\;", "rm"},
		{"sort -o sorted.txt in.txt", "sort"},
		{"X='-o /work/p/x'; sort $X in", "sort"},
		{"awk '{print > \"out\"}' f", "awk"},
		{"awk 'BEGIN{system(\"rm x\")}'", "awk"},
		// Redirections.
		{"echo x > f", "echo"},
		{"echo x >> f", "echo"},
		{"ls &> out.log", "ls"},
		{"echo x | tee out", "tee"},
		{"echo x > ~/.bashrc", "echo"},
		{"echo x > $OUT", "echo"},
		{"ls > /tmp/../etc/x", "ls"},
		{"cd /tmp && echo hi > {/work/p/x,}", "echo"},
		{"{ ls; pwd; } > listing", ""},
		// git and the commands an agent runs most.
		{"git commit -m x", "git commit"},
		{"git push origin main", "git push"},
		{"git branch new-feature", "git branch"},
		{"git log --output=log.txt", "git log"},
		{"git -C /tmp/evil status", "git status"},
		{"make", "make"},
		{"go test ./...", "go test"},
		{"npm test", "npm test"},
		// Interpreters and programs that run others.
		{"python3 -c 'print(1)'", "python3"},
		{"node -e 'require(\"fs\").writeFileSync(\"x\", \"\")'", "node"},
		{"bash -c 'rm -rf build'", "rm"},
		{"sh -c 'touch x'", "touch"},
		{"eval 'echo hi > f'", "echo"},
		{"bash script.sh", "bash"},
		{"env FOO=1 rm x", "rm"},
		{"timeout 5 rm x", "rm"},
		{"nice -n 5 make", "make"},
		{"ls | xargs rm", "rm"},
		{"sudo rm x", "sudo"},
		{"$CMD x", "$CMD"},
		// Substitutions run too.
		{"echo $(touch x)", "touch"},
		{"echo `rm -f y`", "rm"},
		{"cat <<EOF\n$(rm -rf build)\nEOF", "rm"},
		{"diff <(rm x) y", "rm"},
		{"f() { rm -rf build; }; f", "rm"},
		// Settings that change what later commands run or where they write.
		{"env PATH=/tmp/evil ls", "PATH="},
		{"PATH=/tmp/evil:$PATH ls", "PATH="},
		{"export PATH=/tmp/bin:$PATH", "export"},
		{"GIT_EXTERNAL_DIFF=/tmp/evil git diff", "GIT_EXTERNAL_DIFF="},
		// Code hidden in values that bash evaluates later.
		{"x='a[$(touch /work/p/pwn)]'; echo $((x))", ""},
		{"printf -v 'b[$(touch /work/p/x)]' x", ""},
		// What cannot be read asks.
		{"echo 'unclosed", ""},
	}
	for _, tt := range mustAsk {
		got := testChecker().Check(tt.cmd, project)
		if len(got) == 0 {
			t.Errorf("%q runs without asking, and must ask", tt.cmd)
			continue
		}
		var words []string
		for _, r := range got {
			if r.Word == "" || r.Why == "" {
				t.Errorf("%q: a reason without a word or an explanation: %+v", tt.cmd, r)
			}
			words = append(words, r.Word)
		}
		if tt.word != "" && !containsWord(words, tt.word) {
			t.Errorf("%q asks for %q, want the word %q among them", tt.cmd, strings.Join(words, "|"), tt.word)
		}
	}
}

// TestAskModeDecisions pins what the short classifier chose where the
// long one differed: Go's read-only tools write only its caches and run
// without asking, go build and go test (a binary, the project's own code)
// ask once per session with "always"; `sed -i` is remembered apart from
// sed; a word known only when it runs never passes as a harmless operand.
func TestAskModeDecisions(t *testing.T) {
	for _, cmd := range []string{
		"go vet ./...",
		"go list -m all",
		"gofmt -l .",
		"wc -l $(git ls-files '*.go') | sort -n | tail -3",
	} {
		if got := testChecker().Check(cmd, project); len(got) != 0 {
			t.Errorf("%q asks, and must run: %+v", cmd, got)
		}
	}
	for _, tt := range []struct{ cmd, word string }{
		{"go build ./...", "go build"},
		{"go test -run TestX ./internal/...", "go test"},
		{"go vet -vettool=/tmp/evil ./...", "go vet"},
		{"cd /tmp/x && go vet ./...", "go vet"},
		{"gofmt -w .", "gofmt"},
		{"sed -i 's/a/b/' f.go", "sed -i"},
		{"sed --in-place=.bak 's/a/b/' f.go", "sed -i"},
		{"sed -n '/error/w /work/p/x' f", "sed"},
		{"X='-t /work/p'; cp $X /tmp/a", "cp"},
		{"chmod $m /tmp/x", "chmod"},
		{"read -p $P x", "read"},
		{"cp --parents ../x /tmp/d", "cp"},
		{"f() { cd /work/p; }; cd /tmp && f && rm -rf build", "rm"},
	} {
		got := testChecker().Check(tt.cmd, project)
		var words []string
		for _, r := range got {
			words = append(words, r.Word)
		}
		if !containsWord(words, tt.word) {
			t.Errorf("%q asks for %q, want the word %q among them", tt.cmd, strings.Join(words, "|"), tt.word)
		}
	}
}
