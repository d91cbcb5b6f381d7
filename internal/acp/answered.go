package acp

import (
	"encoding/json"
	"io"
	"sync"
)

// answerWatch passes the connection's output through and, once the answer
// naming a new session is written, runs what was waiting for it: the
// session's first updates (its slash commands, its usage) must follow the
// session/new answer, or the client gets them for a session it does not
// know yet, and the SDK writes the answer only after the handler returns.
// The SDK writes each message with one Write.
type answerWatch struct {
	w io.Writer

	mu    sync.Mutex
	hooks map[string]func() // by session id
}

// after runs f (in a goroutine of its own) once an answer whose result
// names session id has been written.
func (a *answerWatch) after(id string, f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hooks == nil {
		a.hooks = map[string]func(){}
	}
	a.hooks[id] = f
}

func (a *answerWatch) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.mu.Lock()
	pending := len(a.hooks) > 0
	a.mu.Unlock()
	if !pending || err != nil {
		return n, err
	}
	var msg struct {
		Method string `json:"method"`
		Result *struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal(p, &msg) != nil || msg.Method != "" || msg.Result == nil || msg.Result.SessionID == "" {
		return n, err
	}
	a.mu.Lock()
	f := a.hooks[msg.Result.SessionID]
	delete(a.hooks, msg.Result.SessionID)
	a.mu.Unlock()
	if f != nil {
		go f()
	}
	return n, err
}

// forget drops what waited for session id (its answer will not come).
func (a *answerWatch) forget(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.hooks, id)
}
