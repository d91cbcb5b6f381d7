package agentsh

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/synapse-agent/synapse/internal/command"
)

// maxEditBytes bounds the files edit loads whole.
const maxEditBytes = 64 << 20

// edit replaces literal text in a file: the first occurrence, or every one
// with --all. The file is left untouched when the text is absent.
func (s *Shell) edit(ctx context.Context, rest string) command.Result {
	toks, err := tokenize(rest)
	if err != nil {
		return usageError("edit", err.Error()+"; quote old and new text with '...' or \"...\"")
	}
	all := false
	var pos []string
	for _, t := range toks {
		if !t.Quoted && t.Value == "--all" {
			all = true
			continue
		}
		pos = append(pos, t.Value)
	}
	if len(pos) != 3 {
		return usageError("edit", fmt.Sprintf("want a file, the old text and the new text, got %d argument(s); quote text that contains spaces", len(pos)))
	}
	path, old, repl := pos[0], pos[1], pos[2]
	if old == "" {
		return usageError("edit", "the old text is empty; give the exact text to replace")
	}
	if old == repl {
		return failf("edit", "the old and new text are identical; nothing to change")
	}
	if ctx.Err() != nil {
		return interrupted("edit")
	}
	abs := s.resolve(path)
	target := realPath(abs)
	if r, ok := s.check("edit", abs, target, true); !ok {
		return r
	}
	f, err := openRegular(target)
	if errors.Is(err, fs.ErrNotExist) {
		return failf("edit", abs+": no such file; create it with write")
	}
	if errors.Is(err, errIsDir) {
		return failf("edit", abs+" is a directory; give a file path")
	}
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return failf("edit", abs+": permission denied")
		}
		return failf("edit", err.Error())
	}
	data, err := readAllLimited(f, maxEditBytes)
	f.Close()
	if err != nil {
		return failf("edit", fmt.Sprintf("%s: %v", abs, err))
	}
	if data == nil {
		return failf("edit", fmt.Sprintf("%s is larger than %d bytes, too large to edit in place; use a native tool such as sed", abs, maxEditBytes))
	}
	text := string(data)
	before := text
	n := strings.Count(text, old)
	if n == 0 {
		return failf("edit", "the old text was not found in "+abs+"; the file is unchanged. Read it (read "+shellQuote(path)+") and copy the exact text, whitespace included")
	}
	replaced := 1
	if all {
		text = strings.ReplaceAll(text, old, repl)
		replaced = n
	} else {
		text = strings.Replace(text, old, repl, 1)
	}
	if err := writeNoFollow(target, []byte(text)); err != nil {
		return failf("edit", err.Error())
	}
	msg := fmt.Sprintf("Edited %s: replaced %s", abs, plural(replaced, "occurrence", "occurrences"))
	if !all && n > 1 {
		msg += fmt.Sprintf(" (the first of %d; add --all to replace every one)", n)
	}
	res := command.OK(msg + "\n")
	res.Change = change(abs, before, text, false)
	return res
}

// change is the FileChange of a command, or nil when the content is too
// large to diff for the person.
func change(path, before, after string, created bool) *command.FileChange {
	if len(before) > command.MaxChangeBytes || len(after) > command.MaxChangeBytes {
		return nil
	}
	return &command.FileChange{Path: path, Old: before, New: after, Created: created}
}
