//go:build linux

package repoguard

import (
	"maps"
	"slices"
)

// Handoff is what the end of a session leaves for a background pass of
// the sweep (Finish) when the tree has folders no watch covered: the
// whole pass costs seconds in a tree of 100 000 folders, and the person
// should not wait for it at every exit. It is the Watch's judgement
// state, not a summary: known repositories stay trusted, late ones are
// compared with their fingerprints, everything else found is judged as
// new, exactly as the session's own pass would.
type Handoff struct {
	Roots []string        `json:"roots"`
	Start int64           `json:"start"` // the file systems' clock when the session's watch started (ns)
	Known []string        `json:"known,omitempty"`
	Fresh []string        `json:"fresh,omitempty"`
	Late  map[string]Late `json:"late,omitempty"`
}

// Late is a repository the sweep found that existed before the session.
type Late struct {
	Ctime int64  `json:"ctime"`
	Print string `json:"print"`
}

// Handoff returns the state a background pass needs, and false when
// every folder is watched (the session's last check has seen all).
func (w *Watch) Handoff() (Handoff, bool) {
	if w == nil {
		return Handoff{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.sw.on {
		return Handoff{}, false
	}
	h := Handoff{Roots: slices.Clone(w.roots), Start: w.sw.t0, Fresh: slices.Clone(w.fresh)}
	h.Known = slices.Sorted(maps.Keys(w.known))
	if len(w.sw.late) > 0 {
		h.Late = make(map[string]Late, len(w.sw.late))
		for p, l := range w.sw.late {
			h.Late[p] = Late{Ctime: l.ctime, Print: l.print}
		}
	}
	return h, true
}

// Finish runs the whole pass of the sweep a session handed off, judging
// and disabling what it finds as the session would, and returns one line
// per repository it disabled (or could not).
func Finish(h Handoff) []string {
	w := NewWatch()
	w.SetRoots(h.Roots)
	w.sw.t0 = h.Start
	for _, p := range h.Known {
		w.known[p] = true
	}
	w.fresh = slices.Clone(h.Fresh)
	if len(h.Late) > 0 {
		w.sw.late = make(map[string]lateRepo, len(h.Late))
		for p, l := range h.Late {
			w.sw.late[p] = lateRepo{ctime: l.Ctime, print: l.Print}
		}
	}
	w.sw.on, w.sw.full = true, true
	return w.Check()
}
