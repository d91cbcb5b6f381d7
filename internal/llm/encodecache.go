package llm

import (
	"bytes"
	"slices"
	"sync"
)

// The whole history is sent on every step, but only its newest messages are
// new: converting and encoding every message again made each step cost more
// as the history grew. EncodeCache keeps each message's encoding (whatever
// an adapter makes of it) between requests and reuses it while the message
// is unchanged, so a step encodes only what is new.
//
// Unchanged is checked by content, field by field, against a copy of the
// message that was encoded: a history rewritten by compaction or offload
// (messages replaced, a result's text swapped for a pointer line) differs
// there and is encoded again. The check stays cheap because strings that
// share their bytes compare without reading them, and the copy shares the
// history's strings (Go strings are immutable). Byte slices (tool inputs)
// are copied, as the caller could change them in place; messages with
// images are never reused (their data is large and mutable).

// maxCachedConversations bounds an EncodeCache: one provider serves the main
// agent and its sub-agents, each with its own history.
const maxCachedConversations = 8

// EncodeCache is safe for concurrent use; the zero value is ready.
type EncodeCache[T any] struct {
	mu    sync.Mutex
	convs []*cachedConv[T] // most recently used first
}

// cachedConv is one history as last encoded: msgs[i] encoded as encs[i].
type cachedConv[T any] struct {
	msgs []Message
	encs []T
}

// Do calls use with the encoding of every message of msgs, in order, taken
// from the cache where the message is unchanged and from encode otherwise.
// use runs under the cache's lock and must not keep the slice.
func (c *EncodeCache[T]) Do(msgs []Message, encode func(Message) (T, error), use func([]T) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := -1
	if len(msgs) > 0 {
		k = slices.IndexFunc(c.convs, func(conv *cachedConv[T]) bool { return sameMessage(conv.msgs[0], msgs[0]) })
	}
	conv := &cachedConv[T]{}
	if k >= 0 {
		conv = c.convs[k]
		c.convs = slices.Delete(c.convs, k, k+1)
	}
	n := min(len(conv.msgs), len(msgs))
	clear(conv.msgs[n:]) // let go of what the history no longer holds
	clear(conv.encs[n:])
	conv.msgs, conv.encs = conv.msgs[:n], conv.encs[:n]
	for i, m := range msgs {
		if i < n && sameMessage(conv.msgs[i], m) {
			continue
		}
		enc, err := encode(m)
		if err != nil {
			return err
		}
		if i < n {
			conv.msgs[i], conv.encs[i] = detach(m), enc
		} else {
			conv.msgs, conv.encs = append(conv.msgs, detach(m)), append(conv.encs, enc)
		}
	}
	if len(msgs) > 0 {
		c.convs = slices.Insert(c.convs, 0, conv)
		if len(c.convs) > maxCachedConversations {
			clear(c.convs[maxCachedConversations:])
			c.convs = c.convs[:maxCachedConversations]
		}
	}
	return use(conv.encs)
}

// detach copies what of m the caller could change in place.
func detach(m Message) Message {
	m.Thinking = slices.Clone(m.Thinking)
	m.ToolCalls = slices.Clone(m.ToolCalls)
	for i := range m.ToolCalls {
		m.ToolCalls[i].Input = bytes.Clone(m.ToolCalls[i].Input)
	}
	return m
}

// sameMessage reports whether m would encode as cached did.
func sameMessage(cached, m Message) bool {
	if len(m.Images) > 0 || cached.Role != m.Role || cached.Text != m.Text || cached.ToolCallID != m.ToolCallID ||
		cached.IsError != m.IsError || !slices.Equal(cached.Thinking, m.Thinking) || len(cached.ToolCalls) != len(m.ToolCalls) {
		return false
	}
	for i, a := range cached.ToolCalls {
		b := m.ToolCalls[i]
		if a.ID != b.ID || a.Name != b.Name || a.Signature != b.Signature || !bytes.Equal(a.Input, b.Input) {
			return false
		}
	}
	return true
}
