package agentsh

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/synapse-agent/synapse/internal/command"
)

// write creates or replaces a file with literal content.
func (s *Shell) write(ctx context.Context, rest string) command.Result {
	if strings.TrimSpace(rest) == "" {
		return usageError("write", "missing file path and content")
	}
	path, after, err := splitQuotedPath(rest)
	if err != nil {
		return usageError("write", err.Error()+`: add the closing quote, e.g. write "my file.txt" 'content'`)
	}
	if path == "" {
		return usageError("write", "empty file path")
	}
	content, ok, err := contentArg(after)
	if err != nil {
		return usageError("write", err.Error())
	}
	if !ok {
		return usageError("write", `missing content (to create an empty file: write `+shellQuote(path)+` "")`)
	}
	if ctx.Err() != nil {
		return interrupted("write")
	}
	abs := s.resolve(path)
	// A symlink at abs is followed: writing replaces the file it points to.
	target := realPath(abs)
	if r, ok := s.check("write", abs, target, true); !ok {
		return r
	}
	mode, existed, err := lstatNoFollow(target)
	if err != nil {
		return failf("write", err.Error())
	}
	if mode.IsDir() {
		return failf("write", abs+" is a directory; give a file path")
	}
	// The old content, for the person's diff (not when too large to diff).
	before, diffable := "", !existed
	if existed && mode.IsRegular() {
		if f, err := openRegular(target); err == nil {
			data, err := readAllLimited(f, command.MaxChangeBytes)
			f.Close()
			if err == nil && data != nil {
				before, diffable = string(data), true
			}
		}
	}
	if err := writeNoFollow(target, []byte(content)); err != nil {
		return failf("write", err.Error())
	}
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	lines := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		lines++
	}
	res := command.OK(fmt.Sprintf("%s %s (%s, %s)\n", verb, abs, plural(len(content), "byte", "bytes"), plural(lines, "line", "lines")))
	if diffable {
		res.Change = change(abs, before, content, !existed)
	}
	return res
}

// contentArg extracts literal content from what follows the path: a heredoc
// (`<<EOF` / `<<'EOF'` / `<<"EOF"` / `<<-EOF` and its body), one quoted
// argument (its quotes removed), or otherwise the text as written. ok is
// false when there is no content at all.
func contentArg(after string) (content string, ok bool, err error) {
	trimmed := strings.TrimLeft(after, " \t")
	if strings.HasPrefix(trimmed, "<<") && !strings.HasPrefix(trimmed, "<<<") {
		body, err := heredoc(trimmed[2:])
		return body, err == nil, err
	}
	if v, ok, err := singleWord(trimmed); err != nil {
		return "", false, fmt.Errorf("Unclosed quote in content: %w", err)
	} else if ok {
		return v, true, nil
	}
	// Unquoted content is taken as written; the separator before it (spaces,
	// or one newline) is not part of it.
	if strings.HasPrefix(trimmed, "\r\n") {
		trimmed = trimmed[2:]
	} else if strings.HasPrefix(trimmed, "\n") {
		trimmed = trimmed[1:]
	}
	if trimmed == "" {
		return "", false, nil
	}
	return trimmed, true, nil
}

// heredoc parses `[-][ ]DELIM\nbody\nDELIM` (s starts after "<<"). The body
// is literal: no expansion whatever the quoting of DELIM.
func heredoc(s string) (string, error) {
	stripTabs := strings.HasPrefix(s, "-")
	if stripTabs {
		s = s[1:]
	}
	s = strings.TrimLeft(s, " \t")
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return "", errors.New("heredoc has no body: put the content on the lines after <<'EOF' and end it with a line containing only EOF")
	}
	head := strings.TrimRight(s[:nl], " \t\r")
	toks, err := tokenize(head)
	if err != nil || len(toks) != 1 || toks[0].Value == "" {
		return "", fmt.Errorf("bad heredoc delimiter %q: write <file> <<'EOF' then the content, then a line with only EOF", head)
	}
	delim := toks[0].Value
	var body strings.Builder
	rest := s[nl+1:]
	for rest != "" {
		line, next, found := strings.Cut(rest, "\n")
		check := strings.TrimSuffix(line, "\r")
		if stripTabs {
			check = strings.TrimLeft(check, "\t")
			line = strings.TrimLeft(line, "\t")
		}
		if check == delim {
			return body.String(), nil
		}
		body.WriteString(line)
		if found {
			body.WriteByte('\n')
		}
		rest = next
	}
	return "", fmt.Errorf("heredoc is not terminated: end the content with a line containing only %s", delim)
}
