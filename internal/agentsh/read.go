package agentsh

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/command"
)

const (
	// maxLineBytes cuts very long lines so that one huge line (minified JS, a
	// 1 GB file without newlines) never has to be held in memory.
	maxLineBytes = 2000
	// binarySniff is how much of the file is looked at for NUL bytes.
	binarySniff = 8000
	// ctxCheckEvery is how many lines pass between cancellation checks.
	ctxCheckEvery = 4096
)

// read prints lines of a file `cat -n` style: the line number right-aligned
// to width 6, a tab, the line. It streams, so memory stays constant however
// large the file is.
func (s *Shell) read(ctx context.Context, rest string) command.Result {
	toks, err := tokenize(rest)
	if err != nil {
		return usageError("read", err.Error())
	}
	offset, limit := 0, s.opts.ReadLimit
	var path string
	havePath := false
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.Quoted && strings.HasPrefix(t.Value, "--") {
			flag, val, hasVal := strings.Cut(t.Value, "=")
			if flag != "--offset" && flag != "--limit" {
				return usageError("read", "unknown flag "+t.Value)
			}
			if !hasVal {
				if i+1 >= len(toks) {
					return usageError("read", flag+" needs a number")
				}
				i++
				val = toks[i].Value
			}
			n, err := strconv.Atoi(val)
			switch {
			case err != nil || n < 0:
				return usageError("read", "invalid "+flag+" value "+strconv.Quote(val)+": want a whole number ≥ 0")
			case flag == "--limit" && n == 0:
				return usageError("read", "invalid --limit value 0: want a whole number ≥ 1")
			case flag == "--offset":
				offset = n
			default:
				limit = n
			}
			continue
		}
		if havePath {
			return usageError("read", "one file at a time (got "+strconv.Quote(path)+" and "+strconv.Quote(t.Value)+"); quote paths that contain spaces")
		}
		path, havePath = t.Value, true
	}
	if !havePath || path == "" {
		return usageError("read", "missing file path")
	}
	abs := s.resolve(path)
	real := realPath(abs)
	if real == "/proc" || strings.HasPrefix(real, "/proc/") || strings.HasPrefix(abs, "/proc/") {
		// read runs inside the agent: /proc/self would be the agent's own
		// process, whose environment holds the keys commands never see.
		return failf("read", abs+": read does not open /proc (it runs inside the agent process); use `cat "+shellQuote(path)+"` in the shell, which runs in the sandbox")
	}
	if r, ok := s.check("read", abs, real, false); !ok {
		return r
	}
	f, err := openRegular(real)
	if errors.Is(err, errIsDir) {
		return failf("read", abs+" is a directory; list it with `ls "+shellQuote(path)+"`")
	}
	if err != nil {
		return failf("read", openError(path, abs, err))
	}
	defer f.Close()
	var out strings.Builder
	res, err := readLines(ctx, f, &out, offset, limit)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted("read")
		}
		if errors.Is(err, errBinary) {
			return failf("read", abs+" looks like a binary file (it contains NUL bytes); inspect it with a native command such as `file` or `xxd | head`")
		}
		return failf("read", abs+": "+err.Error())
	}
	if offset > 0 && res.shown == 0 {
		// Paging past the end is normal: nothing to show, and the length.
		return command.OK("(" + path + " has " + plural(res.skipped, "line", "lines") + "; nothing after --offset " + strconv.Itoa(offset) + ")\n")
	}
	if res.more {
		out.WriteString("\n(Showing lines " + strconv.Itoa(offset+1) + "-" + strconv.Itoa(offset+res.shown) +
			". More lines follow: read " + shellQuote(path) + " --offset " + strconv.Itoa(offset+res.shown) + ")\n")
	}
	return command.OK(out.String())
}

var errBinary = errors.New("binary file")

type readResult struct {
	skipped int  // lines skipped for the offset
	shown   int  // lines written
	more    bool // the file continues after the last line shown
}

// readLines writes lines offset+1 .. offset+limit of r to out.
func readLines(ctx context.Context, r io.Reader, out *strings.Builder, offset, limit int) (readResult, error) {
	var res readResult
	br := bufio.NewReaderSize(r, 64*1024)
	if head, _ := br.Peek(binarySniff); bytes.IndexByte(head, 0) >= 0 {
		return res, errBinary
	}
	line := make([]byte, 0, maxLineBytes+8)
	num := make([]byte, 0, 16)
	for res.skipped < offset {
		if res.skipped%ctxCheckEvery == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		_, _, err := nextLine(br, nil)
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		res.skipped++
	}
	for res.shown < limit {
		if res.shown%ctxCheckEvery == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		var cut int
		var err error
		line, cut, err = nextLine(br, line[:0])
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		res.shown++
		num = appendInt(num[:0], offset+res.shown, 6)
		out.Write(num)
		out.WriteByte('\t')
		out.Write(line)
		if cut > 0 {
			out.WriteString(" … [line cut: " + strconv.Itoa(cut) + " more bytes]")
		}
		out.WriteByte('\n')
	}
	if _, err := br.Peek(1); err == nil {
		res.more = true
	}
	return res, nil
}

// nextLine reads one line into buf (nil buf: discard), without its line
// ending, keeping at most maxLineBytes; cut counts the bytes dropped. It
// returns io.EOF only when no byte was left.
func nextLine(br *bufio.Reader, buf []byte) (line []byte, cut int, err error) {
	keep := buf != nil
	read := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			read = true
		}
		if keep {
			body := chunk
			if err == nil {
				body = bytes.TrimSuffix(body, []byte("\n"))
				body = bytes.TrimSuffix(body, []byte("\r"))
			}
			if room := maxLineBytes - len(buf); room > 0 {
				take := min(room, len(body))
				take = runeStart(body, take)
				buf = append(buf, body[:take]...)
				cut += len(body) - take
			} else {
				cut += len(body)
			}
		}
		switch {
		case err == nil:
			return buf, cut, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && read:
			return buf, cut, nil
		default:
			return buf, cut, err
		}
	}
}

// runeStart moves n back so that b[:n] does not end inside a UTF-8 sequence.
func runeStart(b []byte, n int) int {
	if n >= len(b) {
		return n
	}
	for i := 0; i < 3 && n > 0 && b[n]&0xC0 == 0x80; i++ {
		n--
	}
	return n
}

// appendInt appends n right-aligned to width.
func appendInt(b []byte, n, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(n), 10)
	for i := len(d); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, d...)
}

func openError(path, abs string, err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return abs + ": no such file; check the path (relative paths start at the shell's current directory, see `pwd`)"
	case errors.Is(err, os.ErrPermission):
		return abs + ": permission denied"
	}
	return err.Error()
}

// shellQuote quotes p for a command line when it needs it.
func shellQuote(p string) string {
	if p != "" && strings.IndexFunc(p, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == '~' || r == '+' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
