package shell

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// The pump delivers everything written before the writers closed, the end
// of both streams, and stdout's marker it wakes the loop on, with stderr
// read to its end and sealed by then, whatever the sizes (a full buffer,
// data read together with the hang-up).
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
		pu.out.setActive(true, []byte("id:fin\n"), false)
		pu.err.setActive(true, nil, false)
		want := append(bytes.Repeat([]byte("o"), size), "id:fin\n"...)
		wantErr := append(bytes.Repeat([]byte("e"), size), '\n')
		release := make(chan struct{})
		go func() {
			// All of stderr before stdout's marker, as the shell writes them.
			_, _ = errW.Write(wantErr[:len(wantErr)/2])
			_, _ = errW.Write(wantErr[len(wantErr)/2:])
			_, _ = outW.Write(want)
			<-release
			outW.Close()
			errW.Close()
		}()
		var out, errOut []byte
		released := false
		deadline := time.After(20 * time.Second)
		for {
			sealed := pu.err.isSealed() && !released
			b, oeof := pu.out.take()
			out = append(out, b...)
			b, eeof := pu.err.take()
			errOut = append(errOut, b...)
			if sealed && bytes.HasSuffix(out, []byte("id:fin\n")) {
				if !bytes.Equal(errOut, wantErr) {
					t.Fatalf("size %d: sealed with %d of %d bytes of stderr", size, len(errOut), len(wantErr))
				}
				released = true
				close(release)
			}
			if oeof && eeof {
				break
			}
			select {
			case <-pu.notify:
			case <-deadline:
				t.Fatalf("size %d: no end after 20s (got %d bytes)", size, len(out))
			}
		}
		if !bytes.Equal(out, want) || !bytes.Equal(errOut, wantErr) {
			t.Fatalf("size %d: got %d bytes of stdout, %d of stderr", size, len(out), len(errOut))
		}
		if !pu.out.arrived() || !pu.err.isSealed() {
			t.Fatalf("size %d: marker not seen or stderr not sealed", size)
		}
		pu.stop()
	}
}

// A marker split over reads is found even when the loop took its first
// part in between.
func TestStreamMarkerAcrossTake(t *testing.T) {
	s := &stream{}
	s.setActive(true, []byte("id:fin\n"), false)
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

// arrived reports whether the wake marker arrived since activation.
func (s *stream) arrived() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}
