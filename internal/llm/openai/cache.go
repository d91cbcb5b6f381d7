package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"

	"github.com/synapse-agent/synapse/internal/llm"
)

// encodedMessage is one history message as sent: its message's JSON
// (empty when none) and, for a tool result with images, the image parts
// that follow the run of tool messages.
type encodedMessage struct {
	json  []byte
	parts []sdk.ChatCompletionContentPartUnionParam
}

// body returns the JSON request body: params (without messages) with the
// system prompt and the whole history, each message's encoding reused from
// p.conv while it is unchanged (llm.EncodeCache). "stream" comes first: the
// SDK sets it again with sjson, which scans the body up to the key.
func (p *Provider) body(params sdk.ChatCompletionNewParams, system string, msgs []llm.Message) ([]byte, error) {
	head, err := paramsHead(params)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(`{"stream":true,"messages":[`)
	n := 0 // messages written
	write := func(b []byte) {
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
		n++
	}
	if system != "" {
		b, err := json.Marshal(sdk.SystemMessage(system))
		if err != nil {
			return nil, err
		}
		write(b)
	}
	encode := func(m llm.Message) (encodedMessage, error) {
		msg, parts := message(m, p.images)
		e := encodedMessage{parts: parts}
		if msg != nil {
			b, err := json.Marshal(*msg)
			if err != nil {
				return encodedMessage{}, err
			}
			e.json = b
		}
		return e, nil
	}
	err = p.conv.Do(msgs, encode, func(conv []encodedMessage) error {
		size := len(head)
		for _, e := range conv {
			size += len(e.json) + 1
		}
		buf.Grow(size)
		var pending []sdk.ChatCompletionContentPartUnionParam
		flush := func() error {
			if len(pending) == 0 {
				return nil
			}
			b, err := json.Marshal(sdk.UserMessage(pending))
			if err != nil {
				return err
			}
			write(b)
			pending = nil
			return nil
		}
		for i, e := range conv {
			if msgs[i].Role != llm.RoleTool {
				if err := flush(); err != nil {
					return err
				}
			}
			if len(e.json) > 0 {
				write(e.json)
			}
			pending = append(pending, e.parts...)
		}
		return flush()
	})
	if err != nil {
		return nil, err
	}
	buf.WriteByte(']')
	if n == 0 { // as the SDK encodes no messages: no key
		buf.Reset()
		buf.WriteString(`{"stream":true`)
	}
	if len(head) > 2 { // more than {}
		buf.WriteByte(',')
	}
	buf.Write(head[1:])
	return buf.Bytes(), nil
}

// paramsHead is the request parameters as a JSON object, which the body
// then continues with the history.
func paramsHead(params any) ([]byte, error) {
	head, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if len(head) < 2 || head[0] != '{' {
		return nil, fmt.Errorf("request parameters encode as %.40q, not an object", head)
	}
	return head, nil
}
