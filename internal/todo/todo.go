// Package todo is the agent's task list: a value owned by one agent (never a
// global), updated by the TodoWrite command and read by the agent loop to decide
// whether the model may stop.
package todo

import "sync"

// Status of a todo item.
type Status string

// Statuses.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
)

// Item is one entry of the list.
type Item struct {
	Content    string `json:"content"`
	ActiveForm string `json:"activeForm"`
	Status     Status `json:"status"`
}

// Store holds one agent's list. The zero value is ready to use.
type Store struct {
	mu        sync.Mutex
	items     []Item
	listeners []func([]Item)
}

// Set replaces the list and notifies listeners with a copy.
func (s *Store) Set(items []Item) {
	s.mu.Lock()
	s.items = append([]Item(nil), items...)
	ls := append(([]func([]Item))(nil), s.listeners...)
	snapshot := append([]Item(nil), s.items...)
	s.mu.Unlock()
	for _, l := range ls {
		l(snapshot)
	}
}

// Items returns a copy of the list.
func (s *Store) Items() []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Item(nil), s.items...)
}

// Unfinished returns the items that are pending or in progress.
func (s *Store) Unfinished() []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Item
	for _, it := range s.items {
		if it.Status != Completed {
			out = append(out, it)
		}
	}
	return out
}

// Clear empties the list (and notifies).
func (s *Store) Clear() { s.Set(nil) }

// OnChange registers a listener called after every Set.
func (s *Store) OnChange(fn func([]Item)) {
	s.mu.Lock()
	s.listeners = append(s.listeners, fn)
	s.mu.Unlock()
}
