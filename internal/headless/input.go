package headless

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// inputMessage is one line of --input-format stream-json.
type inputMessage struct {
	Type    string `json:"type"`
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// InputText is the text of one stream-json user message: content as a
// string, or the text blocks of a content array.
func InputText(line []byte) (string, error) {
	var m inputMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return "", fmt.Errorf(`not a JSON object (%v); send {"type":"user","message":{"role":"user","content":"…"}}`, err)
	}
	if m.Type != "user" {
		return "", fmt.Errorf(`type %q: only {"type":"user",…} messages are read`, m.Type)
	}
	var text string
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	switch {
	case json.Unmarshal(m.Message.Content, &text) == nil:
	case json.Unmarshal(m.Message.Content, &blocks) == nil:
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		text = strings.Join(parts, "\n\n")
	default:
		return "", errors.New("message.content must be a string or an array of content blocks")
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the message has no text")
	}
	return text, nil
}
