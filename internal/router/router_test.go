package router

import (
	"slices"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		line   string
		layer  Layer
		family Family
		name   string
	}{
		// Exact Agent Shell words, alone or followed by whitespace.
		{"read", Agent, FamilyBuiltin, "read"},
		{"read ./README.md", Agent, FamilyBuiltin, "read"},
		{"  read\tfile.txt", Agent, FamilyBuiltin, "read"},
		{"write a.txt hello", Agent, FamilyBuiltin, "write"},
		{"edit a.txt x y", Agent, FamilyBuiltin, "edit"},
		{"bash echo hi", Agent, FamilyBuiltin, "bash"},
		{"bash", Agent, FamilyBuiltin, "bash"},
		{"bash   --help", Agent, FamilyBuiltin, "bash"},
		{"TodoWrite '{\"todos\":[]}'", Agent, FamilyBuiltin, "TodoWrite"},
		{"write\n<<EOF", Agent, FamilyBuiltin, "write"},
		// Near misses are native.
		{"editor ./a.txt", Native, FamilyNative, "editor"},
		{"todowrite x", Native, FamilyNative, "todowrite"},
		{"readme.sh", Native, FamilyNative, "readme.sh"},
		{"./read", Native, FamilyNative, "./read"},
		{"Read file", Native, FamilyNative, "Read"},
		{"reader", Native, FamilyNative, "reader"},
		{"read;ls", Native, FamilyNative, "read;ls"},
		{"FOO=1 read x", Native, FamilyNative, "FOO=1"},
		// Agent prefixes.
		{"task:explore --prompt x", Agent, FamilyTask, "task:explore"},
		{"task:skill:search --prompt x", Agent, FamilyTask, "task:skill:search"},
		{"command:search pdf", Agent, FamilySearch, "command:search"},
		{"skill:load pdf", Agent, FamilySkill, "skill:load"},
		{"skill:list", Agent, FamilySkill, "skill:list"},
		// Extensions.
		{"skill:demo:run --x 1", Extension, FamilySkillScript, "skill:demo:run"},
		{"skill:a:b", Extension, FamilySkillScript, "skill:a:b"},
		{"mcp:demo:echo --text hi", Extension, FamilyMCP, "mcp:demo:echo"},
		{"mcp:srv:tool", Extension, FamilyMCP, "mcp:srv:tool"},
		{"mcp:", Extension, FamilyMCP, "mcp:"},
		{"mcp:srv", Extension, FamilyMCP, "mcp:srv"},
		// Native.
		{"npm test", Native, FamilyNative, "npm"},
		{"ls -la | grep x", Native, FamilyNative, "ls"},
		{"", Native, FamilyNative, ""},
		{"   ", Native, FamilyNative, ""},
		{"task:", Native, FamilyNative, "task:"},
		{"command:other", Native, FamilyNative, "command:other"},
		{"echo read", Native, FamilyNative, "echo"},
	}
	for _, tt := range tests {
		got := Classify(tt.line)
		want := Route{Layer: tt.layer, Family: tt.family, Name: tt.name}
		if got != want {
			t.Errorf("Classify(%q) = %+v, want %+v", tt.line, got, want)
		}
	}
}

func TestRest(t *testing.T) {
	tests := []struct{ line, want string }{
		{"bash   --help", "--help"},
		{"  write a.txt  x ", "a.txt  x "},
		{"bash", ""},
		{"bash\n echo", "echo"},
	}
	for _, tt := range tests {
		if got := Rest(tt.line); got != tt.want {
			t.Errorf("Rest(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"rm -rf /tmp/x", []string{"rm"}},
		{"echo x && task:general --prompt y", []string{"echo", "task:general"}},
		{"ls | grep a; cat b || rm c", []string{"ls", "grep", "cat", "rm"}},
		{"(cd x && rm y)", []string{"cd", "rm"}},
		{"echo $(rm -rf x)", []string{"echo", "rm"}},
		{"echo `rm x`", []string{"echo", "rm"}},
		{"diff <(task:explore) b", []string{"diff", "task:explore"}},
		{"bash -c 'task:explore --prompt x'", []string{"bash", "task:explore"}},
		{"bash -lc \"echo a; rm b\"", []string{"bash", "echo", "rm"}},
		{"bash task:explore --prompt x", []string{"bash", "task:explore"}},
		{"sh -c 'rm x'", []string{"sh", "rm"}},
		{"/bin/bash --norc -c 'rm x'", []string{"/bin/bash", "rm"}},
		{"env FOO=1 rm x", []string{"env", "rm"}},
		{"sudo -u root rm x", []string{"sudo", "rm"}},
		{"timeout 5 rm x", []string{"timeout", "rm"}},
		{"find . | xargs -n 1 rm", []string{"find", "xargs", "rm"}},
		{"eval 'rm x'", []string{"eval", "rm"}},
		{"if true; then rm x; fi", []string{"true", "rm"}},
		{"for f in a b; do rm $f; done", []string{"rm"}},
		{"f() { rm x; }; f", []string{"rm", "f"}},
		{"'r'\"m\" x", []string{"rm"}},
		{`r\m x`, []string{"rm"}},
		{"$CMD x", []string{"$CMD"}},
		{"edit ./a.txt old new", []string{"edit"}},
		{"editor ./a.txt", []string{"editor"}},
		{"write \"./tmp/a.txt hello", []string{"write"}},
		{"bash -c 'bash -c \"rm x\"'", []string{"bash", "bash", "rm"}},
		{"FOO=1", []string{"FOO=1"}},
		{"", nil},
	}
	for _, tt := range tests {
		got := Commands(tt.line)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Commands(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func FuzzCommands(f *testing.F) {
	for _, s := range []string{"rm x", "bash -c 'a; b'", "write \"x", "eval $(x)", "a | xargs -I{} b {}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		_ = Commands(line) // must not panic
		_ = Classify(line)
	})
}
