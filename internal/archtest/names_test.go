package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
)

// namesHome is the one package tree allowed to spell the Agent Shell's
// command names: agentsh, whose registry holds the table.
const namesHome = "internal/agentsh"

// nativeToo are registry names that are also words of the native shell
// (the read builtin, write(1), git config's edit, the bash program): a
// literal of one is not taken for the command. The rest — TodoWrite, job:*,
// task:*, skill:*, command:search — mean only the Agent Shell's command.
var nativeToo = []string{registry.Read, registry.Write, registry.Edit, registry.Bash}

// nameLiterals lists, as "file:line: "name"", each string literal of src
// that is an Agent Shell command name.
func nameLiterals(fset *token.FileSet, file string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if _, ok := registry.Lookup(s); ok && !slices.Contains(nativeToo, s) {
			out = append(out, fset.Position(lit.Pos()).String()+": "+lit.Value)
		}
		return true
	})
	return out, nil
}

// No package outside agentsh lists command names: the router, the tool,
// command:search, the views and the other handlers take them from
// agentsh/registry (its constants and table), so a new command is added in
// one place. Tests are free to spell them.
func TestNoCommandNamesOutsideAgentsh(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel == namesHome || name == "testdata" || name == "node_modules" || (strings.HasPrefix(name, ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		scanned++
		hits, err := nameLiterals(fset, path, nil)
		if err != nil {
			return err
		}
		for _, h := range hits {
			t.Errorf("%s: an Agent Shell command name spelled outside %s: use agentsh/registry's constant or table", strings.TrimPrefix(h, root+"/"), namesHome)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned only %d Go files under %s", scanned, root)
	}
}

// The check sees a reintroduced literal, wherever it stands.
func TestNameLiteralsFindsAReintroducedName(t *testing.T) {
	src := `package p

var hint = []string{"TodoWrite", "ls"}

func f(head string) bool { return head == "job:start" || head == ` + "`command:search`" + ` }

const ok = "read" // also the shell's read builtin
`
	hits, err := nameLiterals(token.NewFileSet(), "p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`p.go:3:21: "TodoWrite"`, `p.go:5:43: "job:start"`, "p.go:5:66: `command:search`"}
	if !slices.Equal(hits, want) {
		t.Errorf("hits %q, want %q", hits, want)
	}
}
