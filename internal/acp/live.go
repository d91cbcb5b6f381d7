package acp

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// Live output of a running command goes to the client as tool_call_update
// content: at most one update per liveInterval, each the output's last
// liveMax bytes (an update replaces the call's content, so each carries the
// whole tail, not a delta).
const (
	liveInterval = 100 * time.Millisecond
	liveMax      = 8 << 10
)

// tail keeps the end of a command's output as it arrives.
type tail struct {
	buf     []byte
	dropped bool // output before buf was let go
}

// add appends a chunk; past twice the bound the front is let go, so an
// endless stream costs bounded memory and amortised constant time.
func (t *tail) add(chunk string) {
	t.buf = append(t.buf, chunk...)
	if len(t.buf) > 2*liveMax {
		cut := len(t.buf) - liveMax
		t.buf = append(t.buf[:0], t.buf[cut:]...)
		t.dropped = true
	}
}

// text is the output shown: the last liveMax bytes from a line start (or
// a rune start when a line is that long), a progress line redrawn with \r
// as it stands now, escapes and control characters removed; cut says
// that earlier output is not in it.
func (t *tail) text() (out string, cut bool) {
	b := t.buf
	dropped := t.dropped
	if len(b) > liveMax {
		b = b[len(b)-liveMax:]
		dropped = true
	}
	if dropped {
		if nl := strings.IndexByte(string(b), '\n'); nl >= 0 && nl < len(b)-1 {
			b = b[nl+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return textutil.Sanitize(strings.Join(lines, "\n")), dropped
}

// block is the tail as the client shows it: a code block, after a note
// when earlier output was cut; "" before any output.
func (t *tail) block() string {
	out, cut := t.text()
	if out == "" {
		return ""
	}
	if cut {
		return cutNote + "\n\n" + codeBlock(out)
	}
	return codeBlock(out)
}

// cutNote heads a tail that lost its start.
const cutNote = "… (earlier output not shown)"

// codeBlock shows command output as a fenced block: clients render text
// content as Markdown, where output lines would run together and a '#' or
// '*' would format. The fence is longer than any backtick run inside.
func codeBlock(s string) string {
	s = strings.TrimRight(s, "\n")
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "\n" + s + "\n" + fence
}

// liveCall is one running command's streamed output.
type liveCall struct {
	tail  tail
	sent  time.Time   // when the last update went out
	timer *time.Timer // a pending update, nil when none
}
