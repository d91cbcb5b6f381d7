package shell

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// The pump delivers everything written before the writers closed, the end
// of both streams, and the markers it wakes the loop on, whatever the
// sizes (a full buffer, data read together with the hang-up).
func TestPumpDeliversAllAndTheEnd(t *testing.T) {
	for _, size := range []int{0, 3, 64 << 10, 200 << 10} {
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pu, err := newPump(outR, errR)
		if err != nil {
			t.Fatal(err)
		}
		pu.out.setActive(true, []byte("id:fin\n"))
		pu.err.setActive(true, []byte("id:end\n"))
		want := append(bytes.Repeat([]byte("o"), size), "id:fin\n"...)
		go func() {
			_, _ = outW.Write(want)
			_, _ = errW.Write([]byte("e\nid:e"))
			_, _ = errW.Write([]byte("nd\n"))
			outW.Close()
			errW.Close()
		}()
		var out, errOut []byte
		deadline := time.After(20 * time.Second)
		for {
			b, oeof := pu.out.take()
			out = append(out, b...)
			b, eeof := pu.err.take()
			errOut = append(errOut, b...)
			if oeof && eeof {
				break
			}
			select {
			case <-pu.notify:
			case <-deadline:
				t.Fatalf("size %d: no end after 20s (got %d bytes)", size, len(out))
			}
		}
		if !bytes.Equal(out, want) || string(errOut) != "e\nid:end\n" {
			t.Fatalf("size %d: got %d bytes of stdout, stderr %q", size, len(out), errOut)
		}
		if !pu.out.arrived() || !pu.err.arrived() {
			t.Fatalf("size %d: markers not seen", size)
		}
		pu.stop()
	}
}

// A marker split over reads is found even when the loop took its first
// part in between.
func TestStreamMarkerAcrossTake(t *testing.T) {
	s := &stream{}
	s.setActive(true, []byte("id:fin\n"))
	for i, piece := range []string{"out", "put i", "d:f", "", "in", "\n"} {
		_, marker := s.add([]byte(piece), false)
		if want := i == 5; marker != want {
			t.Fatalf("piece %d %q: marker = %v", i, piece, marker)
		}
		if i == 2 {
			s.take() // the loop woke for something else
		}
	}
	if !s.arrived() {
		t.Fatal("marker not seen")
	}
}
