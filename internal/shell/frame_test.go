package shell

import (
	"strings"
	"testing"
)

func TestFrameAcrossChunkBoundaries(t *testing.T) {
	const id = "synX"
	stream := "junk from a background job" + id + ":start\n" + "out\nput" + id + ":end:3:done:/tmp/a b\n:c:" + id + ":jobs:41\n42\n" + id + ":fin\nlater junk"
	for _, size := range []int{1, 2, 3, 7, len(stream)} {
		f := newFrame(id, true, 1<<20)
		for i := 0; i < len(stream); i += size {
			f.feed([]byte(stream[i:min(i+size, len(stream))]))
		}
		if !f.complete() {
			t.Fatalf("chunk %d: incomplete (phase %d)", size, f.phase)
		}
		if got := f.out.String(); got != "out\nput" {
			t.Fatalf("chunk %d: output %q", size, got)
		}
		tr, err := parseTrailer(f.trailer, id)
		if err != nil || tr.status != 3 || tr.exited || tr.cwd != "/tmp/a b\n:c" || len(tr.jobs) != 2 || tr.jobs[1] != 42 {
			t.Fatalf("chunk %d: trailer %+v %v", size, tr, err)
		}
	}
}

func TestFrameStderrAndExit(t *testing.T) {
	f := newFrame("i", false, 100)
	f.feed([]byte("junk i:st"))
	f.feed([]byte("art\nerr\ni:end\n"))
	f.feed([]byte("more"))
	if f.complete() {
		t.Fatal("stderr frame complete before it was sealed")
	}
	f.seal()
	if !f.complete() || f.out.String() != "err\ni:end\nmore" {
		t.Fatalf("stderr frame: %q complete=%v", f.out.String(), f.complete())
	}
	f = newFrame("i", false, 100)
	f.feed([]byte("junk i:sta"))
	f.seal()
	if !f.complete() || f.out.String() != "" {
		t.Fatalf("stderr frame without its start: %q", f.out.String())
	}
	tr, err := parseTrailer([]byte("7:exit:/:i:jobs:"), "i")
	if err != nil || !tr.exited || tr.status != 7 || tr.cwd != "/" {
		t.Fatalf("exit trailer: %+v %v", tr, err)
	}
}

func TestParseTrailerMalformed(t *testing.T) {
	for _, in := range []string{"", "x:done:/:i:jobs:", "0:done:/ no jobs marker", "0:done:/:i:jobs\n", "0:done", "no colon"} {
		if _, err := parseTrailer([]byte(in), "i"); err == nil {
			t.Errorf("parseTrailer(%q): want error", in)
		}
	}
}

func TestCapped(t *testing.T) {
	c := capped{limit: 10}
	c.write([]byte("abcde"))
	c.write([]byte("fghij"))
	if c.String() != "abcdefghij" {
		t.Fatalf("within limit: %q", c.String())
	}
	for range 100 {
		c.write([]byte("xyz"))
	}
	c.write([]byte("12345"))
	got := c.String()
	if !strings.HasPrefix(got, "abcde\n[… 305 bytes of output not shown]") || !strings.HasSuffix(got, "]\n12345") {
		t.Fatalf("capped: %q", got)
	}
}

func TestFixStderr(t *testing.T) {
	in := "/dev/fd/63: line 1: x: command not found\nkeep /dev/fd/63: inside\n/dev/fd/63: line 2: y: command not found\n"
	want := "bash: line 1: x: command not found\nkeep /dev/fd/63: inside\nbash: line 2: y: command not found\n"
	if got := fixStderr(in); got != want {
		t.Fatalf("fixStderr = %q", got)
	}
}
