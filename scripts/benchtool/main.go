// Command benchtool serves scripts/bench-compare.sh:
//
//	benchtool tree DIR [FOLDERS]  make a monorepo-like tree of FOLDERS (100000) folders in DIR
//	benchtool serve               serve scripted turns in both wire formats until stdin
//	                              closes; prints the base URL first. A prompt "run: CMD"
//	                              gets a call of CMD, written at a model's pace, then
//	                              "ok"; any other prompt gets "ok"
//	benchtool watches PID         print the inotify watches PID holds now
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
		s.Handle(func(r *llmtest.Request) llmtest.Turn {
			_, cmd, ok := strings.Cut(r.FirstUserText(), "run: ")
			if !ok || len(r.ToolResults()) > 0 {
				return llmtest.TextTurn("ok")
			}
			// The arguments in 4-byte pieces 15 ms apart: about 130 ms
			// for a short command, faster than most models write one.
			cmd, _, _ = strings.Cut(cmd, "\n")
			return llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.BashCall("call_1", cmd)}, Fragment: 4, EventDelay: 15 * time.Millisecond}
		})
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
