package shell

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// frame picks one command's output out of a stream: it drops everything
// before "<id>:start\n" (leftovers from background jobs), collects the output
// up to the end marker, then the trailer up to "<id>:fin\n". stderr has
// neither: its frame collects until sealed (see pump.drainErr).
type frame struct {
	start, end, fin []byte // end and fin are nil for stderr
	phase           int    // 0 seeking start, 1 collecting output, 2 collecting trailer, 3 complete
	pending         []byte // unprocessed bytes (may hold a partial marker)
	out             capped
	trailer         []byte
	onOut           func([]byte) // sees the command's output as it is framed (nil: none)
}

// write adds command output.
func (f *frame) write(b []byte) {
	if len(b) == 0 {
		return
	}
	f.out.write(b)
	if f.onOut != nil {
		f.onOut(b)
	}
}

func newFrame(id string, stdout bool, limit int) *frame {
	f := &frame{start: []byte(id + ":start\n"), out: capped{limit: limit}}
	if stdout {
		f.end = []byte(id + ":end:")
		f.fin = []byte(id + ":fin\n")
	}
	return f
}

func (f *frame) complete() bool { return f.phase == 3 }

// seal ends a frame without an end marker (stderr's): all was fed. Without
// its start marker nothing of it is the command's.
func (f *frame) seal() {
	f.phase, f.pending = 3, nil
}

// feed consumes newly read bytes.
func (f *frame) feed(b []byte) {
	if f.phase == 3 || len(b) == 0 {
		return
	}
	f.pending = append(f.pending, b...)
	if f.phase == 0 {
		i := bytes.Index(f.pending, f.start)
		if i < 0 {
			f.pending = keepTail(f.pending, len(f.start)-1)
			return
		}
		f.pending = f.pending[i+len(f.start):]
		f.phase = 1
	}
	if f.phase == 1 && f.end == nil {
		f.write(f.pending)
		f.pending = nil
		return
	}
	if f.phase == 1 {
		i := bytes.Index(f.pending, f.end)
		if i < 0 {
			// Everything but a possible partial marker at the end is output.
			keep := partialSuffix(f.pending, f.end)
			f.write(f.pending[:len(f.pending)-keep])
			f.pending = keepTail(f.pending, keep)
			return
		}
		f.write(f.pending[:i])
		f.pending = f.pending[i+len(f.end):]
		f.phase = 2
	}
	if i := bytes.Index(f.pending, f.fin); i >= 0 {
		f.trailer = f.pending[:i]
		f.pending = nil
		f.phase = 3
	}
}

// keepTail returns the last n bytes of b in a fresh slice, so a large read
// buffer is not kept alive by a few marker bytes.
func keepTail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append([]byte(nil), b[len(b)-n:]...)
}

// trailer is what the driver reports after a command.
type trailer struct {
	status int
	exited bool // the command made the shell exit
	cwd    string
	jobs   []int // process groups of background jobs still known to the shell
}

// parseTrailer reads "<status>:<kind>:<cwd>:<id>:jobs:<pgid>\n...". The cwd
// may hold any byte but the random id, so only the id marker ends it.
func parseTrailer(b []byte, id string) (trailer, error) {
	var t trailer
	s := string(b)
	status, rest, ok1 := strings.Cut(s, ":")
	kind, rest, ok2 := strings.Cut(rest, ":")
	cwd, jobs, ok3 := strings.Cut(rest, ":"+id+":jobs:")
	if !ok1 || !ok2 || !ok3 {
		return t, fmt.Errorf("malformed trailer %q", s)
	}
	n, err := strconv.Atoi(status)
	if err != nil {
		return t, fmt.Errorf("malformed exit status %q", status)
	}
	t.status, t.exited, t.cwd = n, kind == "exit", cwd
	for _, f := range strings.Fields(jobs) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			t.jobs = append(t.jobs, pid)
		}
	}
	return t, nil
}

// capped keeps up to limit bytes of a stream: when more arrives it keeps the
// first and last halves and counts what was dropped between them, so a
// runaway command (`yes`) cannot exhaust memory.
//
// Given a spill function (the stdout of a command whose context carries
// command.WithSpill), a stream that outgrows spillAt goes to the file that
// function creates instead: the file receives up to limit bytes (then a
// note of what was dropped, and the stream's end), and memory keeps only
// spillKeep bytes of each end, so a 20 MB output costs a few hundred KB of
// memory on its way to the capped result (issue 30).
type capped struct {
	limit   int
	head    []byte
	tail    []byte
	dropped int64

	spill   command.SpillFunc // nil: memory only
	file    *os.File          // the spill file, once the stream outgrew spillAt
	written int64             // bytes in file
	seen    int64             // bytes of the stream since it spilled, head included
	werr    error             // the first failed write to file
}

const (
	spillAt   = 1 << 20  // bytes a spilling stream keeps in memory before it goes to its file
	spillKeep = 64 << 10 // bytes of each end kept in memory once it has
)

func (c *capped) write(b []byte) {
	if c.file == nil && c.spill != nil && c.limit > spillAt && len(c.head)+len(c.tail)+len(b) > spillAt {
		c.startSpill()
	}
	if c.file != nil {
		c.spillWrite(b)
		return
	}
	half := c.limit / 2
	if n := min(half-len(c.head), len(b)); n > 0 {
		c.head = append(c.head, b[:n]...)
		b = b[n:]
	}
	if len(b) == 0 {
		return
	}
	c.tail = append(c.tail, b...)
	if over := len(c.tail) - (c.limit - half); over > 0 {
		c.dropped += int64(over)
		// Compact now and then instead of on every write.
		if over > len(c.tail)/2 {
			c.tail = append([]byte(nil), c.tail[over:]...)
		} else {
			c.tail = c.tail[over:]
		}
	}
}

// startSpill moves what is kept so far to a new spill file; when the file
// cannot be made or written, the stream stays in memory, capped as before.
func (c *capped) startSpill() {
	create := c.spill
	c.spill = nil
	f, err := create()
	if err != nil {
		return
	}
	// Nothing was dropped yet: limit > spillAt.
	mem := append(c.head, c.tail...)
	if _, err := f.Write(mem); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return
	}
	c.file, c.written, c.seen = f, int64(len(mem)), int64(len(mem))
	c.head = append([]byte(nil), mem[:min(len(mem), spillKeep)]...)
	c.tail = append(make([]byte, 0, 2*spillKeep), mem[len(c.head):][max(0, len(mem)-len(c.head)-spillKeep):]...)
}

func (c *capped) spillWrite(b []byte) {
	c.seen += int64(len(b))
	// The tail keeps at least the last spillKeep bytes, in place.
	switch {
	case len(b) >= spillKeep:
		c.tail = append(c.tail[:0], b[len(b)-spillKeep:]...)
	case len(c.tail)+len(b) > cap(c.tail):
		n := copy(c.tail, c.tail[len(c.tail)-(spillKeep-len(b)):])
		c.tail = append(c.tail[:n], b...)
	default:
		c.tail = append(c.tail, b...)
	}
	n := int(min(int64(len(b)), max(int64(c.limit)-c.written, 0)))
	if c.werr == nil && n > 0 {
		if _, c.werr = c.file.Write(b[:n]); c.werr == nil {
			c.written += int64(n)
			b = b[n:]
		}
	}
	c.dropped += int64(len(b))
}

// result is the text of the stream for the command's Result and, when the
// stream spilled, its file (written to the end; the caller owns it).
func (c *capped) result() (string, *os.File) {
	if c.file == nil {
		return c.String(), nil
	}
	f := c.file
	c.file = nil
	// The end of the stream after what the file holds.
	end := c.tail[max(0, int64(len(c.tail))-min(c.dropped, spillKeep)):]
	if c.dropped > 0 {
		// The same note as the in-memory cut (String), so both paths give the same bytes.
		note := "\n" + textutil.CutNote(c.dropped-int64(len(end))) + "\n"
		if c.werr != nil {
			note = fmt.Sprintf("\n[… %d bytes of output not shown: %v]\n", c.dropped-int64(len(end)), c.werr)
		}
		_, _ = f.WriteString(note)
		_, _ = f.Write(end)
	}
	// In memory: the first and last bytes, without overlap.
	tail := c.tail[max(0, int64(len(c.tail))-min(spillKeep, c.seen-int64(len(c.head)))):]
	text := string(c.head)
	if c.seen > int64(len(c.head)+len(tail)) {
		text += fmt.Sprintf("\n[... %d bytes more in %s ...]\n", c.seen-int64(len(c.head)+len(tail)), f.Name())
	}
	c.head, c.tail = nil, nil
	return text + string(tail), f
}

func (c *capped) String() string {
	if c.dropped == 0 {
		return string(c.head) + string(c.tail)
	}
	return string(c.head) + "\n" + textutil.CutNote(c.dropped) + "\n" + string(c.tail)
}

// partialSuffix is the length of the longest end of b that begins marker
// (shorter than the marker): only those bytes may be part of a marker still
// arriving, the rest is output and can be passed on at once.
func partialSuffix(b, marker []byte) int {
	for k := min(len(marker)-1, len(b)); k > 0; k-- {
		if bytes.HasSuffix(b, marker[:k]) {
			return k
		}
	}
	return 0
}
