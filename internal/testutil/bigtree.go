package testutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// BigTree describes a generated monorepo-like tree.
type BigTree struct {
	Root  string
	Dirs  int      // folders made (the root not counted)
	Repos []string // the nested repositories' .git directories
}

// MakeBigTree fills root with about dirs folders: top-level packages of
// 10×10 folders each, every tenth package a nested git repository (a bare
// minimum .git: HEAD, objects, refs, a harmless config, an empty hooks
// folder, made without git so that it is quick), and a node_modules of a
// tenth of the folders. A file in every leaf package keeps it realistic
// for walks that look at entries, not only folders.
func MakeBigTree(root string, dirs int) (BigTree, error) {
	t := BigTree{Root: root}
	mk := func(p string) error {
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		t.Dirs++
		return nil
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("big\n"), 0o644); err != nil {
		return t, err
	}
	nm := filepath.Join(root, "node_modules")
	if err := mk(nm); err != nil {
		return t, err
	}
	for i := 0; t.Dirs < dirs/10; i++ {
		pkg := filepath.Join(nm, fmt.Sprintf("dep%05d", i))
		if err := mk(pkg); err != nil {
			return t, err
		}
		if err := mk(filepath.Join(pkg, "lib")); err != nil {
			return t, err
		}
	}
	for i := 0; t.Dirs < dirs; i++ {
		pkg := filepath.Join(root, fmt.Sprintf("pkg%04d", i))
		if err := mk(pkg); err != nil {
			return t, err
		}
		if i%10 == 0 {
			git := filepath.Join(pkg, ".git")
			for _, d := range []string{"", "hooks", "objects", "objects/info", "refs", "refs/heads"} {
				if err := os.Mkdir(filepath.Join(git, d), 0o755); err != nil {
					return t, err
				}
			}
			for name, body := range map[string]string{"HEAD": "ref: refs/heads/main\n", "config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"} {
				if err := os.WriteFile(filepath.Join(git, name), []byte(body), 0o644); err != nil {
					return t, err
				}
			}
			t.Repos = append(t.Repos, git)
		}
		for j := 0; j < 10 && t.Dirs < dirs; j++ {
			mid := filepath.Join(pkg, fmt.Sprintf("m%d", j))
			if err := mk(mid); err != nil {
				return t, err
			}
			for k := 0; k < 9 && t.Dirs < dirs; k++ {
				leaf := filepath.Join(mid, fmt.Sprintf("l%d", k))
				if err := mk(leaf); err != nil {
					return t, err
				}
				if err := os.WriteFile(filepath.Join(leaf, "a.go"), nil, 0o644); err != nil {
					return t, err
				}
			}
		}
	}
	return t, nil
}
