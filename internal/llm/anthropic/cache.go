package anthropic

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/synapse-agent/synapse/internal/llm"
)

// convCache keeps each history message's encoded content blocks between
// requests (llm.EncodeCache), so a step encodes only its new messages.
type convCache struct {
	cache llm.EncodeCache[encodedBlocks]
	// bufs keeps request bodies for reuse: the body is the whole history,
	// and a new one per step made the garbage collector's work per step
	// grow with the history.
	bufs sync.Pool
}

// encodedBlocks is one history message's content blocks.
type encodedBlocks struct {
	role   string // wire role; "" when the message sends nothing
	blocks []byte // as JSON, comma-separated, without brackets
}

// body returns the JSON request body: w followed by the whole history.
// The last wire message is built afresh, since it carries the last cache
// breakpoint and is the part that changes between steps. The buffer is
// c's: done gives it back once nothing reads the body.
func (c *convCache) body(w wireRequest, msgs []llm.Message, markLast bool) (*bytes.Buffer, error) {
	buf, _ := c.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	// w always has fields, so its encoding ends in "}\n": reopen it to add
	// the messages.
	buf.Truncate(len(bytes.TrimRight(buf.Bytes(), "\n")) - 1)
	buf.WriteString(`,"messages":[`)
	err := c.cache.Do(msgs, encodeMessage, func(conv []encodedBlocks) error {
		size := 0
		for _, e := range conv {
			size += len(e.blocks) + len(`{"role":"assistant","content":[]},`)
		}
		buf.Grow(size + 2)
		// The last wire message starts at the first message of the trailing
		// run of same-role messages (messages that send nothing do not
		// break a run).
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
				return err
			}
			buf.Truncate(len(bytes.TrimRight(buf.Bytes(), "\n")))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	buf.WriteString("]}\n")
	return buf, nil
}

// done takes back a body's buffer for the next request.
func (c *convCache) done(buf *bytes.Buffer) {
	buf.Reset()
	c.bufs.Put(buf)
}

func encodeMessage(m llm.Message) (encodedBlocks, error) {
	role, blocks := wireBlocks(m)
	if len(blocks) == 0 {
		return encodedBlocks{}, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(blocks); err != nil {
		return encodedBlocks{}, err
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	return encodedBlocks{role: role, blocks: b[1 : len(b)-1]}, nil // without [ ]
}
