package shell

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// frame picks one command's output out of a stream: it drops everything
// before "<id>:start\n" (leftovers from background jobs), collects the output
// up to the end marker, then (stdout only) the trailer up to "<id>:fin\n".
type frame struct {
	start, end, fin []byte // fin is nil for stderr: the end marker closes it
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
	} else {
		f.end = []byte(id + ":end\n")
	}
	return f
}

func (f *frame) complete() bool { return f.phase == 3 }

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
		if f.fin == nil {
			f.phase = 3
			f.pending = nil
			return
		}
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

// parseTrailer reads "<status>:<kind>\n<cwd>\n<id>:jobs\n<pgid>\n...".
func parseTrailer(b []byte, id string) (trailer, error) {
	var t trailer
	s := string(b)
	head, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return t, fmt.Errorf("malformed trailer %q", s)
	}
	status, kind, _ := strings.Cut(head, ":")
	n, err := strconv.Atoi(status)
	if err != nil {
		return t, fmt.Errorf("malformed exit status %q", status)
	}
	t.status, t.exited = n, kind == "exit"
	cwd, jobs, ok := strings.Cut(rest, "\n"+id+":jobs\n")
	if !ok {
		return t, fmt.Errorf("malformed trailer %q", s)
	}
	t.cwd = cwd
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
type capped struct {
	limit   int
	head    []byte
	tail    []byte
	dropped int64
}

func (c *capped) write(b []byte) {
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
