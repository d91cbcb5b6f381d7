// Package session persists conversations: one JSON-lines history file per
// session (appended line-whole), a per-session usage file and an index of all
// sessions, rewritten atomically under a cross-process lock. Damaged files are
// reported through Store.Warn and skipped, never fatal.
package session

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// IDPrefix starts every session id.
const IDPrefix = "session-"

// Latest, given as an id, names the most recently updated session.
const Latest = "latest"

// Store is a sessions directory.
type Store struct {
	Dir     string
	Pricing Pricing
	// Warn receives non-fatal problems (a corrupt index line, a corrupt
	// history line); nil discards them.
	Warn func(error)
	// MaxRounds bounds the per-round usage entries kept for a session
	// (SYNAPSE_MAX_ROUNDS_KEPT); 0 means MaxRounds.
	MaxRounds int
	// now is the clock; tests replace it.
	now func() time.Time
}

// NewStore returns the store for dir.
func NewStore(dir string, pricing Pricing, warn func(error)) *Store {
	return &Store{Dir: dir, Pricing: pricing, Warn: warn}
}

func (s *Store) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

func (s *Store) warn(err error) {
	if s.Warn != nil && err != nil {
		s.Warn(err)
	}
}

func (s *Store) historyPath(id string) string { return filepath.Join(s.Dir, id+".jsonl") }

// HistoryFile is where session id's history is kept (JSON Lines, one
// message a line); it may not exist yet for a new session.
func (s *Store) HistoryFile(id string) string { return s.historyPath(id) }
func (s *Store) usagePath(id string) string   { return filepath.Join(s.Dir, id+".usage.json") }

// Entry is one session as listed in the index.
type Entry struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	MessageCount int       `json:"messageCount"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	Cwd          string    `json:"cwd,omitempty"`
	// Project is the repository Cwd is in (fsutil.ProjectRoot): sessions
	// are the project's, whichever of its directories they ran in.
	Project string `json:"project,omitempty"`
	Model   string `json:"model,omitempty"`
	Usage   Usage  `json:"usage"` // totals only; rounds live in the usage file
	// HistoryMissing marks an indexed session whose history file is gone
	// (deleted by hand): it is still listed, so that it is not lost from
	// sight, and opens empty. Never written to the index.
	HistoryMissing bool `json:"historyMissing,omitempty"`

	indexed bool // read from the index (not rebuilt from a history file)
}

// Empty reports whether the session has nothing to resume: "latest"
// (--continue, /resume --latest) passes over such sessions.
func (e Entry) Empty() bool { return e.HistoryMissing || e.MessageCount == 0 }

// Session is one open conversation. Its methods are safe for concurrent use
// (sub-agents report usage from their own goroutines).
type Session struct {
	store *Store

	mu          sync.Mutex
	entry       Entry
	usage       *Usage
	dirty       bool // usage changed since the last flush
	file        *os.File
	lock        *os.File // the writer lock, held from open (or first write) to Close
	needNewline bool     // the history file ends without '\n' (a torn last line)
	needOrigin  bool     // the history file has no line yet: the next one carries the origin
	buf         bytes.Buffer
	indexed     bool      // the index has an entry for this session
	lastFlush   time.Time // when usage and index were last written
	// closed: Close was called and no message appended since; AppendShown
	// then writes nothing (a run that ends after its session was closed
	// must not take the session's lock again).
	closed bool
}

// FlushInterval bounds how often Append rewrites the usage file and the index
// during a busy run: the history line is written on every Append, but two
// atomic rewrites per tool step would dominate the agent's own cost. Flush
// (called at the end of every run) and Close always write.
const FlushInterval = time.Second

// Create starts a new session in memory. Nothing touches the disk until the
// first message is appended, so a session appears only once it has one.
func (s *Store) Create(cwd string) *Session {
	now := s.clock()
	id := IDPrefix + now.Format("20060102-150405") + "-" + randomHex(3)
	e := Entry{ID: id, CreatedAt: now, UpdatedAt: now, Cwd: cwd}
	if cwd != "" {
		e.Project = fsutil.ProjectRoot(cwd)
	}
	return &Session{store: s, entry: e, usage: &Usage{}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on supported platforms; fall back to the clock.
		return fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff)
	}
	return hex.EncodeToString(b)
}

// ID is the session id.
func (ss *Session) ID() string { return ss.entry.ID }

// Entry returns the session's index entry as it stands.
func (ss *Session) Entry() Entry {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.entry
}

// Usage returns a copy of the session's usage.
func (ss *Session) Usage() *Usage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.usage.clone()
}

// SetTitle sets the title from the user's text unless the session has one.
func (ss *Session) SetTitle(text string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.entry.Title == "" {
		ss.entry.Title = Title(text)
	}
}

// AddUsage records one round of usage in memory; the next Append or Flush
// writes it.
func (ss *Session) AddUsage(u llm.Usage, model string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.usage.add(ss.store.clock(), u, model, ss.store.Pricing, cmp.Or(ss.store.MaxRounds, MaxRounds))
	if model != "" {
		ss.entry.Model = model
	}
	ss.dirty = true
}

// record is one history line: the message plus when it was written. The
// first line also carries the session's origin.
type record struct {
	Time   time.Time `json:"ts"`
	Origin *origin   `json:"session,omitempty"`
	// Shown is set on a line that is no message (no role): what was shown
	// besides the conversation (shown.go).
	Shown *Shown `json:"shown,omitempty"`
	// Replaced is set on a line that is no message: a tool result earlier
	// in the file whose text changed (offloaded to a file, or cut).
	Replaced *Replaced `json:"replaced,omitempty"`
	llm.Message
}

// origin is where a session ran and when it began, kept on its history's
// first line (and again on the first line of a rewritten history) so that
// an index lost or corrupted is rebuilt with each session in its project:
// without it a rebuilt session belongs to no project and vanishes from
// `synapse sessions`, --continue and /resume.
type origin struct {
	Cwd       string    `json:"cwd,omitempty"`
	Project   string    `json:"project,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// originLocked is the origin of the session's entry; the caller holds ss.mu.
func (ss *Session) originLocked() *origin {
	return &origin{Cwd: ss.entry.Cwd, Project: ss.entry.Project, CreatedAt: ss.entry.CreatedAt}
}

// Append writes msgs to the history file in one write (whole lines), then
// updates the usage file and the index.
func (ss *Session) Append(msgs ...llm.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if err := ss.openLocked(); err != nil {
		return err
	}
	ss.closed = false
	now := ss.store.clock()
	recs := make([]record, len(msgs))
	for i, m := range msgs {
		recs[i] = record{Time: now, Message: m}
	}
	if err := ss.writeLocked(recs); err != nil {
		return err
	}
	if ss.entry.Title == "" {
		for _, m := range msgs {
			if m.Role == llm.RoleUser && m.Text != "" {
				ss.entry.Title = Title(m.Text)
				break
			}
		}
	}
	ss.entry.MessageCount += len(msgs)
	ss.entry.UpdatedAt = now
	ss.dirty = true
	if ss.indexed && now.Sub(ss.lastFlush) < FlushInterval {
		return nil
	}
	return ss.flushLocked()
}

// Flush writes pending usage and the index entry (only once the session has a message).
func (ss *Session) Flush() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.flushLocked()
}

// FlushIfDue writes pending usage and the index entry unless they were
// written less than FlushInterval ago: for usage reported many times a
// second (parallel sub-agents), whose owner calls Flush when it is done.
func (ss *Session) FlushIfDue() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.indexed && ss.store.clock().Sub(ss.lastFlush) < FlushInterval {
		return nil
	}
	return ss.flushLocked()
}

func (ss *Session) flushLocked() error {
	if !ss.dirty || ss.entry.MessageCount == 0 {
		return nil
	}
	data, err := json.Marshal(ss.usage)
	if err != nil {
		return fmt.Errorf("encode session usage: %w", err)
	}
	if err := fsutil.WriteFileAtomic(ss.store.usagePath(ss.entry.ID), append(data, '\n'), 0o600); err != nil {
		return err
	}
	e := ss.entry
	e.Usage = *ss.usage
	e.Usage.Rounds = nil
	if err := ss.store.upsert(e); err != nil {
		return err
	}
	ss.dirty, ss.indexed, ss.lastFlush = false, true, ss.store.clock()
	return nil
}

func (ss *Session) openLocked() error {
	if ss.file != nil {
		return nil
	}
	if err := ss.lockLocked(); err != nil {
		return err
	}
	path := ss.store.historyPath(ss.entry.ID)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open session history %s: %w", path, err)
	}
	if st, err := f.Stat(); err == nil {
		ss.needNewline = st.Size() > 0 && !endsWithNewline(path, st.Size())
		ss.needOrigin = st.Size() == 0
	}
	ss.file = f
	return nil
}

func endsWithNewline(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, size-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// Close flushes pending usage, closes the history file and releases the
// session for another process.
func (ss *Session) Close() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.closed = true
	err := ss.flushLocked()
	if ss.file != nil {
		if cerr := ss.file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close session history: %w", cerr)
		}
		ss.file = nil
	}
	if ss.lock != nil {
		_ = ss.lock.Close() // releases the flock
		ss.lock = nil
	}
	return err
}

// Open resolves idOrPrefix (an id, a unique prefix of one, or "latest") and
// loads that session for writing: its sanitised history and its usage. The
// session's writer lock is held until Close; a session another process has
// open is refused with a *LockedError.
func (s *Store) Open(idOrPrefix string) (*Session, []llm.Message, error) {
	entry, err := s.resolve(idOrPrefix)
	if err != nil {
		return nil, nil, err
	}
	lock, err := s.lockSession(entry.ID)
	if err != nil {
		return nil, nil, err
	}
	// Read under the lock: the history is whole, and one deleted meanwhile fails here.
	ss, msgs, err := s.load(entry)
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	ss.lock = lock
	return ss, msgs, nil
}

// load reads the session of a listed entry: its history and its usage.
func (s *Store) load(entry Entry) (*Session, []llm.Message, error) {
	id := entry.ID
	h, err := s.readHistory(id)
	if errors.Is(err, fs.ErrNotExist) && entry.indexed {
		// The index knows it but its history is gone: it opens empty and
		// keeps its place (project, title, usage); the next message
		// starts a new history file.
		h, err = history{}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ok := entry.indexed
	if !ok {
		entry = s.rebuildEntry(id, h)
	}
	entry.MessageCount = len(h.msgs)
	entry.HistoryMissing = false
	usage := s.readUsage(id, entry)
	ss := &Session{store: s, entry: entry, usage: usage, indexed: ok}
	return ss, Sanitize(h.msgs), nil
}

// History reads a session's sanitised messages without opening it for
// writing; a listed session whose history file is gone has none.
func (s *Store) History(id string) ([]llm.Message, error) {
	h, err := s.readHistory(id)
	if errors.Is(err, fs.ErrNotExist) {
		if e, rerr := s.resolve(id); rerr == nil && e.ID == id && e.indexed {
			return nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return Sanitize(h.msgs), nil
}

// history is what a history file holds: the messages of its valid lines,
// the time of the first one and the session's origin (nil in a file
// written before origins were recorded).
type history struct {
	msgs   []llm.Message
	first  time.Time
	origin *origin
	shown  []shownAt
}

// readHistory reads a session's history file; corrupt lines are reported
// and skipped. A missing file is an error wrapping fs.ErrNotExist.
func (s *Store) readHistory(id string) (history, error) {
	var h history
	path := s.historyPath(id)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, fmt.Errorf("session %s has no history file %s; run `synapse sessions` to list the sessions: %w", id, path, err)
	}
	if err != nil {
		return h, fmt.Errorf("open session history: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	bad := corruptLines{warn: s.warn}
	defer bad.done(fmt.Sprintf("session %s: %s", id, path))
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var rec record
			jerr := json.Unmarshal(line, &rec)
			if jerr == nil && rec.Replaced != nil && rec.Role == "" {
				h.replace(rec.Replaced)
				if h.origin == nil {
					h.origin = rec.Origin
				}
			} else if jerr == nil && rec.Shown != nil && rec.Role == "" {
				h.shown = append(h.shown, shownAt{at: len(h.msgs), shown: rec.Shown})
				if h.origin == nil {
					h.origin = rec.Origin
				}
			} else if jerr != nil || !validRole(rec.Role) {
				if jerr == nil {
					jerr = fmt.Errorf("unknown role %q", rec.Role)
				}
				bad.add(func() error {
					return fmt.Errorf("session %s: line %d of %s is corrupt and was skipped: %w", id, lineNo, path, jerr)
				})
			} else {
				if len(h.msgs) == 0 {
					h.first = rec.Time
				}
				if h.origin == nil {
					h.origin = rec.Origin
				}
				h.msgs = append(h.msgs, rec.Message)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return history{}, fmt.Errorf("read session history %s: %w", path, err)
		}
	}
	return h, nil
}

func validRole(r llm.Role) bool {
	return r == llm.RoleUser || r == llm.RoleAssistant || r == llm.RoleTool
}

func (s *Store) readUsage(id string, e Entry) *Usage {
	data, err := os.ReadFile(s.usagePath(id))
	if err == nil {
		var u Usage
		if jerr := json.Unmarshal(data, &u); jerr == nil {
			return &u
		} else {
			s.warn(fmt.Errorf("session %s: usage file is corrupt and was rebuilt from the index totals: %w", id, jerr))
		}
	}
	u := e.Usage
	u.Rounds = nil
	return &u
}

// rebuildEntry is the index entry of a session the index does not know,
// from its history: the origin line puts it back in its project.
func (s *Store) rebuildEntry(id string, h history) Entry {
	e := Entry{ID: id, CreatedAt: h.first, UpdatedAt: h.first}
	if o := h.origin; o != nil {
		e.Cwd, e.Project = o.Cwd, o.Project
		if !o.CreatedAt.IsZero() {
			e.CreatedAt = o.CreatedAt
		}
	}
	if st, err := os.Stat(s.historyPath(id)); err == nil {
		e.UpdatedAt = st.ModTime()
		if e.CreatedAt.IsZero() {
			e.CreatedAt = st.ModTime()
		}
	}
	for _, m := range h.msgs {
		if m.Role == llm.RoleUser && m.Text != "" {
			e.Title = Title(m.Text)
			break
		}
	}
	e.MessageCount = len(h.msgs)
	return e
}

// Resolve turns an id, a unique id prefix or "latest" into a session id.
func (s *Store) Resolve(idOrPrefix string) (string, error) {
	e, err := s.resolve(idOrPrefix)
	return e.ID, err
}

// resolve is Resolve returning the session's listed entry.
func (s *Store) resolve(idOrPrefix string) (Entry, error) {
	want := strings.TrimSpace(idOrPrefix)
	entries, err := s.List()
	if err != nil {
		return Entry{}, err
	}
	if want == "" || want == Latest {
		for _, e := range entries {
			if !e.Empty() {
				return e, nil
			}
		}
		return Entry{}, fmt.Errorf("no saved sessions in %s yet; start one with `synapse run` or `synapse`", s.Dir)
	}
	var matches []Entry
	for _, e := range entries {
		if e.ID == want {
			return e, nil
		}
		if strings.HasPrefix(e.ID, want) || strings.HasPrefix(e.ID, IDPrefix+want) {
			matches = append(matches, e)
		}
	}
	switch len(matches) {
	case 0:
		return Entry{}, fmt.Errorf("no session matches %q in %s; run `synapse sessions` to list them", want, s.Dir)
	case 1:
		return matches[0], nil
	default:
		var ids []string
		for _, m := range matches[:min(len(matches), 5)] {
			ids = append(ids, m.ID)
		}
		if len(matches) > 5 {
			ids = append(ids, "…")
		}
		return Entry{}, fmt.Errorf("%q matches several sessions (%s); give more of the id", want, strings.Join(ids, ", "))
	}
}

// List returns all sessions, most recently updated first. History files the
// index does not know (a lost or corrupt index) are listed from their
// content; indexed sessions whose history file is gone are listed with
// HistoryMissing.
func (s *Store) List() ([]Entry, error) {
	entries, err := s.readIndex()
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(entries))
	for i, e := range entries {
		known[e.ID] = true
		if _, err := os.Stat(s.historyPath(e.ID)); errors.Is(err, fs.ErrNotExist) {
			entries[i].HistoryMissing = true
		}
	}
	files, err := filepath.Glob(filepath.Join(s.Dir, IDPrefix+"*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.Dir, err)
	}
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		if known[id] {
			continue
		}
		h, err := s.readHistory(id)
		if err != nil || len(h.msgs) == 0 {
			continue
		}
		e := s.rebuildEntry(id, h)
		e.Usage = *s.readUsage(id, e)
		e.Usage.Rounds = nil
		entries = append(entries, e)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].UpdatedAt.After(entries[j].UpdatedAt) })
	return entries, nil
}

// InProject reports whether a session belongs to the project of dir: the
// repository dir is in (fsutil.ProjectRoot), so a session started at its
// top is found from any of its subdirectories. Entries written before
// projects were recorded are placed by their directory. Entries rebuilt
// from a history file alone carry no directory and belong to no project;
// `--all` still lists them.
func (e Entry) InProject(dir string) bool {
	return dir != "" && e.inProject(fsutil.ProjectRoot(dir))
}

// inProject is InProject for the project root itself.
func (e Entry) inProject(root string) bool {
	p := e.Project
	if p == "" && e.Cwd != "" {
		p = fsutil.ProjectRoot(e.Cwd)
	}
	return p != "" && filepath.Clean(p) == root
}

// ListProject is List narrowed to the sessions of dir's project.
func (s *Store) ListProject(dir string) ([]Entry, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	root := fsutil.ProjectRoot(dir)
	var out []Entry
	for _, e := range all {
		if dir != "" && e.inProject(root) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Title shortens the user's first text into a one-line title.
func Title(text string) string {
	const max = 60
	// A wrapped first message keeps the user's words after this heading.
	if i := strings.Index(text, "Original user request"); i >= 0 {
		if nl := strings.IndexByte(text[i:], '\n'); nl >= 0 {
			text = text[i+nl+1:]
		}
	}
	// Sanitized, so that a title never drives the terminal it is listed in.
	t := strings.Join(strings.Fields(textutil.Sanitize(text)), " ")
	return textutil.OneLine(t, max)
}

// maxCorruptWarnings is how many corrupt lines of one file are reported one
// by one; the rest are counted in one more warning.
const maxCorruptWarnings = 3

// corruptLines reports the first corrupt lines of a file and counts the rest.
type corruptLines struct {
	warn  func(error)
	shown int
	more  int
}

func (c *corruptLines) add(describe func() error) {
	if c.shown < maxCorruptWarnings {
		c.shown++
		c.warn(describe())
		return
	}
	c.more++
}

// done reports the count of corrupt lines not reported one by one.
func (c *corruptLines) done(file string) {
	if c.more > 0 {
		c.warn(fmt.Errorf("%s: %d more corrupt lines were skipped", file, c.more))
	}
}

// FilesDir is the directory of a session's own files (offloaded tool
// results, pre-compaction archives); it goes with the session.
func (s *Store) FilesDir(id string) string { return filepath.Join(s.Dir, id) }

// OffloadDir is where this session's offloaded tool results are kept.
func (ss *Session) OffloadDir() string {
	return filepath.Join(ss.store.FilesDir(ss.entry.ID), "offloaded")
}

// Rewrite replaces the session's history file with msgs, atomically (a
// crash leaves the old history or the new one, never a mix). With archive
// not nil, that history (the old one, as the caller knows it, each message
// passed through expand when it is not nil) is first kept in an archive
// file beside it, whose path is returned. Both are streamed to disk.
func (ss *Session) Rewrite(msgs, archive []llm.Message, expand func(llm.Message) llm.Message) (string, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.store.clock()
	encode := func(ms []llm.Message, expand func(llm.Message) llm.Message, o *origin) func(io.Writer) error {
		return func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			for i, m := range ms {
				if expand != nil {
					m = expand(m)
				}
				rec := record{Time: now, Message: m}
				if i == 0 {
					rec.Origin = o
				}
				if err := enc.Encode(rec); err != nil {
					return fmt.Errorf("encode session message: %w", err)
				}
			}
			return nil
		}
	}
	if err := ss.lockLocked(); err != nil {
		return "", err
	}
	archivePath := ""
	if archive != nil {
		dir := ss.store.FilesDir(ss.entry.ID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("create session directory %s: %w", dir, err)
		}
		archivePath = filepath.Join(dir, "archive-"+now.Format("20060102-150405.000000000")+".jsonl")
		if err := fsutil.WriteAtomic(archivePath, 0o600, encode(archive, expand, nil)); err != nil {
			return "", fmt.Errorf("archive the history before rewriting it: %w", err)
		}
	}
	if ss.file != nil {
		_ = ss.file.Close()
		ss.file = nil
	}
	// The rewritten history keeps its origin line, or a rebuilt index
	// would lose the session's project.
	if err := fsutil.WriteAtomic(ss.store.historyPath(ss.entry.ID), 0o600, encode(msgs, nil, ss.originLocked())); err != nil {
		return "", fmt.Errorf("rewrite session history: %w", err)
	}
	ss.needNewline, ss.needOrigin = false, len(msgs) == 0
	ss.entry.MessageCount = len(msgs)
	ss.entry.UpdatedAt = now
	ss.dirty = true
	return archivePath, ss.flushLocked()
}

// Prune deletes the oldest sessions (by last update) so that at most keep
// remain, never the one named current nor one open in another process, with
// their files. It returns the ids it removed.
func (s *Store) Prune(keep int, current string) ([]string, error) {
	if keep <= 0 {
		return nil, nil
	}
	list, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(list) <= keep {
		return nil, nil
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].UpdatedAt.After(list[j].UpdatedAt) })
	var removed []string
	var errs []error
	kept := 0
	for _, e := range list {
		if e.ID == current || kept < keep {
			if e.ID != current {
				kept++
			}
			continue
		}
		if err := s.Delete(e.ID); err != nil {
			var locked *LockedError
			if !errors.As(err, &locked) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, e.ID)
	}
	return removed, errors.Join(errs...)
}
