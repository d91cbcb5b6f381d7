package llm

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// maxPlainJSON bounds a whole-response body read into memory.
const maxPlainJSON = 64 << 20

// StreamFromJSON is HTTP middleware (the shape both SDKs' WithMiddleware
// take) for streaming requests: some gateways and proxies ignore
// "stream": true and answer with the whole response as one JSON body. Such a
// 2xx answer is rewritten by toSSE into the event stream the SDK reads, so it
// counts as one complete response. A body toSSE cannot convert is passed on
// unchanged, for the adapter to report.
func StreamFromJSON(toSSE func(body []byte) ([]byte, error)) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || resp.StatusCode/100 != 2 {
			return resp, err
		}
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if mt != "application/json" {
			return resp, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxPlainJSON))
		_ = resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the response body: %w", err)
		}
		out, cerr := toSSE(body)
		if cerr != nil {
			out = body
		} else {
			resp.Header.Set("Content-Type", "text/event-stream")
		}
		resp.Header.Del("Content-Length")
		resp.ContentLength = int64(len(out))
		resp.Body = io.NopCloser(bytes.NewReader(out))
		return resp, nil
	}
}

// SSEEvent appends one server-sent event (event may be "") to buf.
func SSEEvent(buf *bytes.Buffer, event string, data []byte) {
	if event != "" {
		buf.WriteString("event: " + event + "\n")
	}
	buf.WriteString("data: ")
	buf.Write(data)
	buf.WriteString("\n\n")
}
