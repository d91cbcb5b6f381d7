package shell

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadPtableSeesThisProcess(t *testing.T) {
	tab, err := readPtable()
	if err != nil {
		t.Fatal(err)
	}
	me, ok := tab[os.Getpid()]
	if !ok {
		t.Fatalf("this process (%d) is not in the table of %d", os.Getpid(), len(tab))
	}
	if me.ppid != os.Getppid() {
		t.Errorf("ppid = %d, want %d", me.ppid, os.Getppid())
	}
	if pg, _ := getpgid(); me.pgid != pg {
		t.Errorf("pgid = %d, want %d", me.pgid, pg)
	}
}

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want procInfo
		ok   bool
	}{
		{"7 (bash) S 1 42 43 34816 42 4194560 1", procInfo{7, 1, 42, 43}, true},
		{"7 (a) b) (c) R 3 5 6 0", procInfo{7, 3, 5, 6}, true},
		{"7 (x) S 3 5 6\n", procInfo{7, 3, 5, 6}, true},
		{"7 (x y z) S 3 5", procInfo{}, false},
		{"7 no parens 1 2 3", procInfo{}, false},
		{"7 (x) S 3 five 6 0", procInfo{}, false},
	} {
		got, ok := parseStat(7, []byte(c.in))
		if ok != c.ok || got != c.want {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func BenchmarkReadPtable(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readPtable(); err != nil {
			b.Fatal(err)
		}
	}
}

func getpgid() (int, error) { return unix.Getpgid(0) }

// TestHostPidIn: the scan from a pid on sees only what is above it
// (hostPid then reads the whole table).
func TestHostPidIn(t *testing.T) {
	self, parent := os.Getpid(), os.Getppid()
	if got := hostPidIn(parent, self, 0); got != self {
		t.Errorf("whole table: hostPidIn = %d, want %d", got, self)
	}
	if got := hostPidIn(parent, self, self+1); got != 0 {
		t.Errorf("from %d on: hostPidIn = %d, want 0 (not seen)", self+1, got)
	}
	if got := hostPid(parent, self); got != self {
		t.Errorf("hostPid = %d, want %d", got, self)
	}
}
