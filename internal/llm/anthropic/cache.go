package anthropic

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	"github.com/synapse-agent/synapse/internal/llm"
)

// The whole history is sent on every step, but only its newest messages are
// new: converting and encoding every message again made each step cost more
// as the history grew. convCache keeps each message's encoded content blocks
// between requests and reuses them while the message is unchanged, so a step
// converts only what is new and copies the rest.
//
// Unchanged is checked by content, field by field, against a copy of the
// message that was encoded: a history rewritten by compaction or offload
// (messages replaced, a result's text swapped for a pointer line) differs
// there and is encoded again. The check stays cheap because strings that
// share their bytes compare without reading them, and the copy shares the
// history's strings (Go strings are immutable). Byte slices (tool inputs)
// are copied, as the caller could change them in place; messages with
// images are never cached (their data is large and mutable).

// maxCachedConversations bounds the cache: one Provider serves the main
// agent and its sub-agents, each with its own history.
const maxCachedConversations = 8

type convCache struct {
	mu    sync.Mutex
	convs [][]encodedMessage // most recently used first
}

// encodedMessage is one history message as last encoded.
type encodedMessage struct {
	msg    llm.Message
	role   string // wire role; "" when the message sends nothing
	blocks []byte // content blocks as JSON, comma-separated, without brackets
}

// body returns the JSON request body: w followed by the whole history.
// The last wire message is built afresh, since it carries the last cache
// breakpoint and is the part that changes between steps.
func (c *convCache) body(w wireRequest, msgs []llm.Message, markLast bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	// w always has fields, so its encoding ends in `}` after a newline-less
	// last value: reopen it to add the messages.
	buf.Truncate(len(bytes.TrimRight(buf.Bytes(), "\n")) - 1)
	buf.WriteString(`,"messages":[`)

	c.mu.Lock()
	defer c.mu.Unlock()
	conv, err := c.encoded(msgs)
	if err != nil {
		return nil, err
	}
	size := 0
	for _, e := range conv {
		size += len(e.blocks) + len(`{"role":"assistant","content":[]},`)
	}
	buf.Grow(size + 2)
	// The last wire message starts at the first message of the trailing run
	// of same-role messages (messages that send nothing do not break a run).
	start, lastRole := len(conv), ""
	for i := len(conv) - 1; i >= 0; i-- {
		if r := conv[i].role; r != "" {
			if lastRole != "" && r != lastRole {
				break
			}
			start, lastRole = i, r
		}
	}
	role := "" // of the wire message being written
	for _, e := range conv[:start] {
		if e.role == "" {
			continue
		}
		if e.role != role {
			if role != "" {
				buf.WriteString(`]},`)
			}
			role = e.role
			buf.WriteString(`{"role":"` + role + `","content":[`)
		} else {
			buf.WriteByte(',')
		}
		buf.Write(e.blocks)
	}
	if role != "" {
		buf.WriteString(`]}`)
	}
	if last := messages(msgs[start:]); len(last) > 0 {
		if markLast {
			markLastMessage(&last[0])
		}
		if role != "" {
			buf.WriteByte(',')
		}
		if err := enc.Encode(last[0]); err != nil {
			return nil, err
		}
		buf.Truncate(len(bytes.TrimRight(buf.Bytes(), "\n")))
	}
	buf.WriteString("]}\n")
	return buf.Bytes(), nil
}

// encoded returns the cached conversation for msgs, brought up to date:
// entries that still match are kept, the others encoded again. c.mu is held.
func (c *convCache) encoded(msgs []llm.Message) ([]encodedMessage, error) {
	k := -1
	if len(msgs) > 0 {
		k = slices.IndexFunc(c.convs, func(conv []encodedMessage) bool { return sameMessage(conv[0].msg, msgs[0]) })
	}
	var conv []encodedMessage
	if k >= 0 {
		conv = c.convs[k]
		c.convs = slices.Delete(c.convs, k, k+1)
	}
	conv = conv[:min(len(conv), len(msgs))]
	for i, m := range msgs {
		if i < len(conv) && sameMessage(conv[i].msg, m) {
			continue
		}
		e, err := encodeMessage(m)
		if err != nil {
			return nil, err
		}
		if i < len(conv) {
			conv[i] = e
		} else {
			conv = append(conv, e)
		}
	}
	if len(conv) > 0 {
		c.convs = slices.Insert(c.convs, 0, conv)
		if len(c.convs) > maxCachedConversations {
			clear(c.convs[maxCachedConversations:])
			c.convs = c.convs[:maxCachedConversations]
		}
	}
	return conv, nil
}

func encodeMessage(m llm.Message) (encodedMessage, error) {
	role, blocks := wireBlocks(m)
	e := encodedMessage{msg: detach(m), role: role}
	if len(blocks) == 0 {
		e.role = ""
		return e, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(blocks); err != nil {
		return encodedMessage{}, err
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	e.blocks = b[1 : len(b)-1] // without [ ]
	return e, nil
}

// detach copies what of m the caller could change in place.
func detach(m llm.Message) llm.Message {
	m.Thinking = slices.Clone(m.Thinking)
	m.ToolCalls = slices.Clone(m.ToolCalls)
	for i := range m.ToolCalls {
		m.ToolCalls[i].Input = bytes.Clone(m.ToolCalls[i].Input)
	}
	return m
}

// sameMessage reports whether m encodes as cached did.
func sameMessage(cached, m llm.Message) bool {
	if len(m.Images) > 0 || cached.Role != m.Role || cached.Text != m.Text || cached.ToolCallID != m.ToolCallID ||
		cached.IsError != m.IsError || !slices.Equal(cached.Thinking, m.Thinking) || len(cached.ToolCalls) != len(m.ToolCalls) {
		return false
	}
	for i, a := range cached.ToolCalls {
		b := m.ToolCalls[i]
		if a.ID != b.ID || a.Name != b.Name || !bytes.Equal(a.Input, b.Input) {
			return false
		}
	}
	return true
}
