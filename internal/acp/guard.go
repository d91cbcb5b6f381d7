package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	sdk "github.com/coder/acp-go-sdk"
)

// maxMessage bounds one message from the client, newline included: the
// SDK reads lines with a 10 MB scanner and stops reading for good at a
// longer one, which ends the connection with every session and running
// command. A little is left for the scanner's own needs.
const maxMessage = 10<<20 - 4<<10

// tooLargeMethod is what an oversized request becomes, so that the SDK
// answers its id with the error HandleExtensionMethod gives.
const tooLargeMethod = "_synapse/message_too_large"

// headBytes is how much of an oversized message is kept to find its id.
const headBytes = 64 << 10

// lineGuard passes the client's messages to the SDK one line at a time: a
// line over maxMessage is not passed (a request becomes tooLargeMethod
// with its id, anything else is dropped), and a line that is not JSON is
// dropped with a short note instead of the SDK logging it whole.
type lineGuard struct {
	r       *bufio.Reader
	log     io.Writer
	pending []byte
	err     error // returned once pending is passed on
}

func newLineGuard(r io.Reader, log io.Writer) *lineGuard {
	return &lineGuard{r: bufio.NewReaderSize(r, 64<<10), log: log}
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		g.pending, g.err = g.next()
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// next is the next line to pass on ("" for a dropped one) and the read
// error that ended it.
func (g *lineGuard) next() ([]byte, error) {
	var line []byte
	total := 0
	for {
		chunk, err := g.r.ReadSlice('\n')
		total += len(chunk)
		switch {
		case total <= maxMessage:
			line = append(line, chunk...)
		case len(line) < headBytes:
			line = append(line, chunk[:min(len(chunk), headBytes-len(line))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if total > maxMessage {
			return g.tooLarge(line, total), err
		}
		if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
			fmt.Fprintf(g.log, "synapse acp: a message from the client is not JSON and was skipped (%d bytes)\n", len(line))
			return nil, err
		}
		return line, err
	}
}

// tooLarge is what an oversized message becomes: a request for
// tooLargeMethod with its id, or nothing when no id is found (a
// notification, or an id after the bulk).
func (g *lineGuard) tooLarge(head []byte, size int) []byte {
	id, method := messageID(head)
	fmt.Fprintf(g.log, "synapse acp: a %s message of %d MB from the client is over the %d MB limit and was refused\n",
		orUnknown(method), size>>20, (maxMessage>>20)+1)
	if id == nil {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": tooLargeMethod,
		"params": map[string]any{"bytes": size, "method": method}})
	return append(b, '\n')
}

// messageID reads the id and method of a JSON-RPC message from its
// beginning (head may be cut anywhere); a nil id when it is not there.
func messageID(head []byte) (json.RawMessage, string) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ""
	}
	var id json.RawMessage
	method := ""
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break // the value runs past head: the bulk
		}
		switch t {
		case "id":
			if len(v) > 0 && (v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
				id = v
			}
		case "method":
			_ = json.Unmarshal(v, &method)
		}
	}
	return id, method
}

// HandleExtensionMethod implements sdk.ExtensionMethodHandler: the only
// extension is the error for an oversized request (lineGuard).
func (s *Server) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != tooLargeMethod {
		return nil, sdk.NewMethodNotFound(method)
	}
	var p struct {
		Bytes  int    `json:"bytes"`
		Method string `json:"method"`
	}
	_ = json.Unmarshal(params, &p)
	return nil, sdk.NewInvalidRequest(fmt.Sprintf("the %s message is %d MB; a message may be at most %d MB: attach smaller images, or link large files instead of embedding them",
		orUnknown(p.Method), p.Bytes>>20, (maxMessage>>20)+1))
}
