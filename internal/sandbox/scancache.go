package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

// dirCache keeps, between sessions, the entries of the folders the mount
// plan's scan read, each with the folder's inode and change time. A folder
// whose change time and inode are what they were has the same entries
// (adding, removing or renaming one changes the folder's ctime, and no
// command can set a ctime back), so the next scan takes them from the
// cache at the price of one lstat instead of open, getdents and close.
//
// The file lives in the agent home (no sandboxed command can write it);
// one that is torn, foreign or of another version is ignored whole. A
// folder changed less than racyWindow before the scan began is not kept:
// its ctime may not move for a change made within the same clock tick
// (the way git treats a racily clean index entry).
type dirCache struct {
	path  string
	roots []string
	start int64 // when this scan began (ns)
	// window is racyWindow (tests that cannot age a folder narrow it).
	window int64
	ready  chan struct{}        // closed when hit is filled (and ahead made)
	ahead  *planAhead           // the manager's plan, made when loaded (takeAhead)
	hit    map[string]cachedDir // loaded or read; unchanged as of the last check
	dirty  bool                 // what is kept differs from what was loaded
	// loaded counts the folders of the file; checked: the plan has
	// checked hit (readDir's first call).
	loaded  int
	checked bool
	// usedChanged: the check dropped a folder a speculative plan took
	// from hit (cachedDir.used); checkDone is closed when that check has
	// run (startCheck).
	usedChanged bool
	checkDone   chan struct{}
	// ents, dents and enc are read's buffers, reused: a scan takes the
	// entries of 2 000 folders from the cache, and decoding each into
	// slices of its own made a megabyte of garbage in the plan.
	ents  []cachedEnt
	dents []fs.DirEntry
	enc   []byte
	dr    repoguard.DirReader // reads a folder the cache lacks
}

// cachedDir is a folder's stamp and entries. The entries stay encoded
// as in the file (a slice of the file's bytes for a loaded folder) and
// are decoded when read: a cache of 14 000 folders holds no 29 000
// entries of its own between the load and the plan.
type cachedDir struct {
	ino   uint64
	ctime int64
	ents  string // n entries: uvarint length, name, uvarint type bits
	n     int32
	racy  bool // read within racyWindow of its change: used, never saved
	keep  bool // read or confirmed by this scan: written to the file
	// used: taken by a speculative plan before the check (a flag, not a
	// list of 2 000 paths).
	used bool
}

// cachedEnt is one entry: its name and the type bits of its mode.
type cachedEnt struct {
	name string
	typ  fs.FileMode
}

// Pointer methods: a *cachedEnt in an fs.DirEntry costs no allocation.
func (e *cachedEnt) Name() string               { return e.name }
func (e *cachedEnt) IsDir() bool                { return e.typ.IsDir() }
func (e *cachedEnt) Type() fs.FileMode          { return e.typ }
func (e *cachedEnt) Info() (fs.FileInfo, error) { return nil, errors.ErrUnsupported }

const (
	cacheMagic = "synapse-scan-cache 1\n"
	racyWindow = int64(2 * time.Second)
	// maxCacheFile bounds what is read of a cache file.
	maxCacheFile = 64 << 20
)

// openDirCache starts loading the cache of the scan of roots from dir in
// the background (the manager starts it in NewManager, so that it
// overlaps the platform's probe, when one runs, and the rest of the
// agent's set-up); nil when dir is "". When ahead is set, the plan it
// names is made next, still in the background, with the cache's reader:
// the manager plans the mounts it expects, so that the first sandbox
// takes a plan made meanwhile (takeAhead), or in the REPL while the
// model writes its first answer; with no cache yet, that plan reads the
// folders from the disk.
func openDirCache(dir string, roots []string, ahead *planAhead) *dirCache {
	if dir == "" {
		return nil
	}
	c := newDirCache(dir, roots)
	c.ahead = ahead
	go c.prepare()
	return c
}

// planAhead is a plan made before it is asked for (openDirCache): the
// inputs it was made of and, once the cache is ready, the plan.
type planAhead struct {
	p   Policy
	env []string
	mp  mountPlan
}

// newDirCache is openDirCache before its prepare starts.
func newDirCache(dir string, roots []string) *dirCache {
	sum := sha256.Sum256([]byte(strings.Join(roots, "\x00")))
	return &dirCache{
		path:   filepath.Join(dir, "scan-"+hex.EncodeToString(sum[:8])),
		roots:  slices.Clone(roots),
		start:  time.Now().UnixNano(),
		window: racyWindow,
		ready:  make(chan struct{}),
	}
}

// prepare loads the file and makes the plan ahead, if any. That plan is
// speculative as one made in wrap is: it takes loaded folders unchecked
// (and reads the rest from the disk), marks every folder it took as used,
// and is kept only if the check that runs while the shell starts finds
// none of them changed since (confirm). Either way only the changed
// folders are read again.
func (c *dirCache) prepare() {
	defer close(c.ready)
	old, _ := c.load()
	c.loaded = len(old)
	c.hit = old
	if c.hit == nil {
		c.hit = map[string]cachedDir{}
	}
	if c.ahead != nil {
		c.ahead.mp = planMountsRead(c.ahead.p, c.ahead.env, c.readUsed)
		c.ahead.mp.read = nil
	}
}

// takeAhead returns the plan made ahead when it was made of the inputs of
// p and env (the private temp directory aside: made later, and not
// scanned; its mount points are made here), waiting for it. A plan of
// other inputs is dropped.
func (c *dirCache) takeAhead(p Policy, env []string) (mountPlan, bool) {
	<-c.ready
	a := c.ahead
	c.ahead = nil
	if a == nil {
		return mountPlan{}, false
	}
	want, had := p, a.p
	want.TempDir, had.TempDir = "", ""
	if !reflect.DeepEqual(want, had) || !slices.Equal(env, a.env) {
		a.mp.watch.Close()
		for d, cd := range c.hit {
			if cd.used { // by the plan dropped: not one the check should judge
				cd.used = false
				c.hit[d] = cd
			}
		}
		return mountPlan{}, false
	}
	if p.TempDir != "" && !p.ReadOnly {
		prepareTmpMountPoints(p.TempDir, append(slices.Clone(a.mp.writable), a.mp.readonly...))
	}
	return a.mp, true
}

// check keeps of hit the folders whose inode and change time are what
// they were, and drops those changed within racyWindow of now (their
// ctime may not move for a change made within the same clock tick): a
// stat each, on a few goroutines (the stats wait on the kernel more than
// on each other). It runs when the plan first reads, so what the plan
// takes from the cache, the plan ahead's reads included, is as of then.
func (c *dirCache) check() {
	c.start = time.Now().UnixNano()
	paths := make([]string, 0, len(c.hit))
	for p := range c.hit {
		paths = append(paths, p)
	}
	const workers = 4
	ok := make([]bool, len(paths))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(paths); i += workers {
				cd := c.hit[paths[i]]
				ino, ctime, err := dirStamp(paths[i])
				ok[i] = err == nil && ino == cd.ino && ctime == cd.ctime && ctime < c.start-c.window
			}
		})
	}
	wg.Wait()
	for i, p := range paths {
		if !ok[i] {
			c.usedChanged = c.usedChanged || c.hit[p].used
			delete(c.hit, p)
			c.dirty = true
		} else if cd := c.hit[p]; cd.racy {
			cd.racy = false // settled since the plan ahead read it
			c.hit[p] = cd
		}
	}
}

// scanKey names the scan of p: its roots, and whether they are read-only
// (a read-only scan reads other folders).
func scanKey(p Policy) []string {
	if p.ReadOnly {
		return append(slices.Clone(p.Whitelist), "\x00read-only")
	}
	return p.Whitelist
}

// matches reports whether c is the cache of the scan of roots.
func (c *dirCache) matches(roots []string) bool { return c != nil && slices.Equal(c.roots, roots) }

// readDir returns dir's entries, sorted by name as os.ReadDir's are, from
// the cache when the folder is unchanged.
func (c *dirCache) readDir(dir string) ([]fs.DirEntry, error) {
	if c == nil {
		return readDirSorted(dir)
	}
	<-c.ready
	if !c.checked {
		c.checked = true
		c.check()
	}
	return c.read(dir)
}

// speculate is readDir without the check: a plan made with it is
// speculative until confirm says that no folder it took from the cache
// has changed. The check then runs while the shell starts (startCheck),
// off the first command's path.
func (c *dirCache) speculate(dir string) ([]fs.DirEntry, error) {
	<-c.ready
	return c.readUsed(dir)
}

// readUsed is read marking the folder as taken by a speculative plan,
// whether it came from the file or from the disk (a folder read from the
// disk for the plan ahead can change before the shell starts, too).
func (c *dirCache) readUsed(dir string) ([]fs.DirEntry, error) {
	ents, err := c.read(dir)
	if cd, ok := c.hit[dir]; ok && !cd.used {
		cd.used = true
		c.hit[dir] = cd
	}
	return ents, err
}

// startCheck runs the check in the background once the speculative
// plan has read what it reads (the cache's goroutine is then the check's).
func (c *dirCache) startCheck() {
	c.checked = true
	c.dropBuffers()
	c.checkDone = make(chan struct{})
	go func() {
		defer close(c.checkDone)
		<-c.ready // a plan that read nothing did not wait for the load
		c.check()
	}()
}

// confirm waits for the check and reports whether every folder the
// speculative plan took from the cache is unchanged (and settled): then
// that plan is the one the cache-checked plan would have made. What it
// took of a changed folder is not kept for the file.
func (c *dirCache) confirm() bool {
	<-c.checkDone
	// A changed one was dropped by the check, so not kept either.
	for d, cd := range c.hit {
		if cd.used && !cd.racy && !cd.keep {
			cd.keep = true // settled since the plan ahead read it
			c.hit[d] = cd
		}
	}
	return !c.usedChanged
}

// read is readDir for the one goroutine that owns the cache: the plan ahead
// before ready, the plan after it. A folder read from the disk is kept
// for this process whatever its age (as if the scan had run then), and
// for the file only when settled. The entries of a folder taken from
// the cache are valid until the next call (the scan's walk is done with
// a folder's entries before it reads another).
func (c *dirCache) read(dir string) ([]fs.DirEntry, error) {
	if cd, ok := c.hit[dir]; ok {
		if !cd.racy && !cd.keep {
			cd.keep = true
			c.hit[dir] = cd
		}
		return c.entries(cd), nil
	}
	// Stamped as it is read (the descriptor's fstat before getdents): a
	// change after that is seen as a change by the next scan.
	names, ino, ctime, err := c.dr.Read(dir)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(names, func(a, b repoguard.DirName) int { return strings.Compare(a.Name, b.Name) })
	c.enc = encodeEnts(c.enc[:0], names)
	cd := cachedDir{ino: ino, ctime: ctime, ents: string(c.enc), n: int32(len(names)), racy: ctime >= c.start-c.window}
	cd.keep = !cd.racy
	c.hit[dir] = cd
	c.dirty = true
	return c.entries(cd), nil
}

// entries are cd's entries, decoded into read's buffers.
func (c *dirCache) entries(cd cachedDir) []fs.DirEntry {
	// Grown to the size needed, not doubled: one folder may hold
	// thousands of entries (a node_modules).
	c.ents = decodeEnts(slices.Grow(c.ents[:0], int(cd.n)), cd.ents, cd.n)
	c.dents = slices.Grow(c.dents[:0], int(cd.n))
	for i := range c.ents {
		c.dents = append(c.dents, &c.ents[i])
	}
	return c.dents
}

// dropBuffers lets read's buffers go when a plan is done reading (a
// node_modules of 5 000 entries leaves them 200 KB long).
func (c *dirCache) dropBuffers() { c.ents, c.dents, c.enc, c.dr = nil, nil, nil, repoguard.DirReader{} }

// encodeEnts appends entries to b as the file holds them.
func encodeEnts(b []byte, ents []repoguard.DirName) []byte {
	for _, e := range ents {
		b = binary.AppendUvarint(b, uint64(len(e.Name)))
		b = append(b, e.Name...)
		b = binary.AppendUvarint(b, uint64(e.Type))
	}
	return b
}

// decodeEnts appends to out the n entries encodeEnts (or a checked file)
// made; the names are slices of s.
func decodeEnts(out []cachedEnt, s string, n int32) []cachedEnt {
	for range n {
		l, k := uvarint(s)
		s = s[k:]
		name := s[:l]
		s = s[l:]
		t, k := uvarint(s)
		s = s[k:]
		out = append(out, cachedEnt{name: name, typ: fs.FileMode(t)})
	}
	return out
}

// uvarint is binary.Uvarint of a string (never called on a bad one).
func uvarint(s string) (uint64, int) {
	var v uint64
	for i := 0; i < len(s) && i < 10; i++ {
		v |= uint64(s[i]&0x7f) << (7 * i)
		if s[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, len(s)
}

// encode returns what this scan read or confirmed, for writeCache, or
// nil when it is what was loaded. The maps are dropped: the bytes wait for
// the session's end, when the cache is written (not on the first
// command's path).
func (c *dirCache) encode() []byte {
	if c == nil {
		return nil
	}
	<-c.ready
	hit := c.hit
	c.hit = nil
	c.dropBuffers()
	// Counted, not copied: an unchanged cache (every session after the
	// first in a tree at rest) is not written, and builds nothing.
	kept := 0
	for _, cd := range hit {
		if cd.keep {
			kept++
		}
	}
	if !c.dirty && kept == c.loaded {
		return nil
	}
	paths := make([]string, 0, kept)
	for p, cd := range hit {
		if cd.keep {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	// Made at its size: the bytes are kept until the session ends, and a
	// buffer grown by doubling left up to half of it unused.
	var tmp [binary.MaxVarintLen64]byte
	size := func(v uint64) int { return len(binary.AppendUvarint(tmp[:0], v)) }
	n := len(cacheMagic) + 4
	for _, p := range paths {
		cd := hit[p]
		n += size(uint64(len(p))) + len(p) + size(cd.ino) + size(uint64(cd.ctime)) + size(uint64(cd.n)) + len(cd.ents)
	}
	b := append(make([]byte, 0, n), cacheMagic...)
	for _, p := range paths {
		cd := hit[p]
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
		b = binary.AppendUvarint(b, cd.ino)
		b = binary.AppendUvarint(b, uint64(cd.ctime))
		b = binary.AppendUvarint(b, uint64(cd.n))
		b = append(b, cd.ents...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// writeCache writes data to a temporary file renamed over path (no
// fsync: a torn file fails its checksum and is ignored). The cache folder
// is made, and the agent home too, private as the sessions make it: on a
// machine that only runs `synapse exec`, nothing else would, and every
// start would probe and scan again.
func writeCache(path string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".scan-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

var errBadCache = errors.New("scan cache: not a cache of this version")

// load reads the cache file (never through a link).
func (c *dirCache) load() (map[string]cachedDir, error) {
	f, err := os.OpenFile(c.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read in one piece of the file's size: io.ReadAll would grow its
	// buffer a dozen times for a file of a megabyte.
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxCacheFile || st.Size() < int64(len(cacheMagic)+4) {
		return nil, errBadCache
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return nil, errBadCache
	}
	body, tail := data[:len(data)-4], data[len(data)-4:]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(tail) {
		return nil, errBadCache
	}
	// The names are slices of one string, the file's bytes themselves
	// (never written to again): no allocation each, nor a copy of all.
	if len(body) == len(cacheMagic) {
		return map[string]cachedDir{}, nil
	}
	all := unsafe.String(&body[len(cacheMagic)], len(body)-len(cacheMagic))
	r := all
	bad := false
	num := func() uint64 {
		var v uint64
		n := 0
		for shift := uint(0); ; shift += 7 {
			if n >= len(r) || shift > 63 {
				n = 0
				break
			}
			b := r[n]
			n++
			v |= uint64(b&0x7f) << shift
			if b < 0x80 {
				break
			}
		}
		if n == 0 {
			bad = true
			return 0
		}
		r = r[n:]
		return v
	}
	str := func() string {
		n := num()
		if bad || n > uint64(len(r)) {
			bad = true
			return ""
		}
		s := r[:n]
		r = r[n:]
		return s
	}
	// Read twice: the first pass checks the file and counts its folders,
	// the second fills a map made at that size (a guess from the file's
	// length made it twice too large, or grown through copies).
	var out map[string]cachedDir
	folders := 0
	for pass := range 2 {
		r = all
		for len(r) > 0 && !bad {
			p := str()
			cd := cachedDir{ino: num(), ctime: int64(num())}
			n := num()
			if n > uint64(len(r)) {
				return nil, errBadCache
			}
			// The entries are checked here and kept encoded (decodeEnts).
			start := r
			for range n {
				str()
				num()
			}
			cd.ents, cd.n = start[:len(start)-len(r)], int32(n)
			if pass == 0 {
				folders++
			} else {
				out[p] = cd
			}
		}
		if bad {
			return nil, errBadCache
		}
		if pass == 0 {
			out = make(map[string]cachedDir, folders)
		}
	}
	return out, nil
}

// readDirSorted is os.ReadDir (entries sorted by name) with getdents
// alone (repoguard.ReadDirNoBlock: no poller registration, a system call
// a folder fewer), not following dir itself nor blocking on a FIFO put
// in its place: the walk reads only what it found to be a folder.
func readDirSorted(dir string) ([]fs.DirEntry, error) {
	ents, err := repoguard.ReadDirNoBlock(dir)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}
