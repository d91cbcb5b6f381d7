// Command benchtool serves scripts/bench-compare.sh:
//
//	benchtool tree DIR [FOLDERS]  make a monorepo-like tree of FOLDERS (100000) folders in DIR
//	benchtool serve               serve scripted text turns ("ok") in both wire formats
//	                              until stdin closes; prints the base URL first
//	benchtool watches PID         print the inotify watches PID holds now
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: benchtool tree DIR [FOLDERS] | serve | watches PID")
	}
	switch args[0] {
	case "tree":
		if len(args) < 2 {
			return fmt.Errorf("usage: benchtool tree DIR [FOLDERS]")
		}
		n := 100_000
		if len(args) > 2 {
			v, err := strconv.Atoi(args[2])
			if err != nil {
				return fmt.Errorf("folders: %w", err)
			}
			n = v
		}
		if err := os.MkdirAll(args[1], 0o755); err != nil {
			return err
		}
		t, err := testutil.MakeBigTree(args[1], n)
		if err != nil {
			return err
		}
		fmt.Printf("%d folders, %d nested repositories\n", t.Dirs, len(t.Repos))
		return nil
	case "serve":
		s := llmtest.NewServer()
		s.Handle(func(*llmtest.Request) llmtest.Turn { return llmtest.TextTurn("ok") })
		defer s.Close()
		fmt.Println(s.URL())
		_, _ = io.Copy(io.Discard, os.Stdin)
		return nil
	case "watches":
		if len(args) < 2 {
			return fmt.Errorf("usage: benchtool watches PID")
		}
		n, err := watches(args[1])
		if err != nil {
			return err
		}
		fmt.Println(n)
		return nil
	}
	return fmt.Errorf("unknown subcommand %q", args[0])
}

// watches counts the inotify watches of process pid: one "inotify wd:"
// line per watch in the fdinfo of each of its inotify descriptors.
func watches(pid string) (int, error) {
	fds, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name()))
		if err != nil || link != "anon_inode:inotify" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", pid, "fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "inotify wd:") {
				n++
			}
		}
	}
	return n, nil
}
