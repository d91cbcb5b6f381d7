// Package mcptest is a small MCP server built with the official Go SDK, used by
// the tests and benchmarks of internal/mcp (over stdio, streamable HTTP and
// SSE) and runnable by hand through ./mcptestserver.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TypedSchema exercises every argument type the client maps.
const TypedSchema = `{
  "type": "object",
  "properties": {
    "name":    {"type": "string", "description": "Who to greet."},
    "count":   {"type": "integer", "description": "How many times.", "default": 1},
    "ratio":   {"type": "number", "description": "A fraction."},
    "verbose": {"type": "boolean", "description": "Print more."},
    "tags":    {"type": "array", "items": {"type": "string"}, "description": "Labels to attach."},
    "sizes":   {"type": "array", "items": {"type": "integer"}},
    "options": {"type": "object", "description": "Free-form settings."},
    "mode":    {"type": "string", "enum": ["fast", "slow"], "default": "fast", "description": "Speed."},
    "note":    {"type": ["string", "null"]}
  },
  "required": ["name", "count"]
}`

// PatchSchema has an array-of-object parameter, as file-editing servers do.
const PatchSchema = `{
  "type": "object",
  "properties": {
    "path":  {"type": "string", "description": "File to change."},
    "edits": {"type": "array", "description": "Replacements to make, in order.",
      "items": {"type": "object",
        "properties": {
          "oldText": {"type": "string", "description": "Text to find."},
          "newText": {"type": "string", "description": "Text to put instead."},
          "count":   {"type": "integer", "description": "How many occurrences."}
        },
        "required": ["oldText", "newText"]}},
    "dryRun": {"type": "boolean", "description": "Only show what would change."}
  },
  "required": ["path", "edits"]
}`

// PNG is the image the "image" tool returns: a real 4x4 PNG.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return b.Bytes()
}

// NewServer returns the test server. crash decides what the "crash" tool does
// (nil: exit the process, for stdio servers).
func NewServer(crash func()) *sdk.Server {
	if crash == nil {
		crash = func() { os.Exit(3) }
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "synapse-mcptest", Version: "1.0.0"}, nil)
	// echo and add change nothing and say so (readOnlyHint); the others
	// declare nothing.
	readOnly := map[string]bool{"echo": true, "add": true}
	add := func(name, desc, schema string, h func(args map[string]any) (*sdk.CallToolResult, error)) {
		var ann *sdk.ToolAnnotations
		if readOnly[name] {
			ann = &sdk.ToolAnnotations{ReadOnlyHint: true}
		}
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema), Annotations: ann},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var args map[string]any
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
						return nil, err
					}
				}
				return h(args)
			})
	}
	reportSize := int64(48213)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	add("echo", "Echo the given text back.", `{"type":"object","properties":{"text":{"type":"string","description":"Text to echo."}},"required":["text"]}`,
		func(a map[string]any) (*sdk.CallToolResult, error) { return text(fmt.Sprint(a["text"])), nil })
	add("add", "Add two integers and return the sum.", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`,
		func(a map[string]any) (*sdk.CallToolResult, error) {
			x, _ := a["a"].(float64)
			y, _ := a["b"].(float64)
			return text(fmt.Sprint(int64(x + y))), nil
		})
	add("typed", "Return the arguments it received as JSON.\nSecond line of the description.", TypedSchema,
		func(a map[string]any) (*sdk.CallToolResult, error) {
			b, _ := json.Marshal(a)
			return text(string(b)), nil
		})
	add("image", "Return a small image and a caption.", `{"type":"object"}`,
		func(map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "caption"},
				&sdk.ImageContent{MIMEType: "image/png", Data: PNG()},
				&sdk.ResourceLink{URI: "file:///tmp/report.pdf", Name: "report", MIMEType: "application/pdf", Size: &reportSize, Description: "The quarterly report."},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "embedded text"}},
			}}, nil
		})
	add("patch", "Apply text replacements to a file and return the arguments received as JSON.", PatchSchema,
		func(a map[string]any) (*sdk.CallToolResult, error) {
			b, _ := json.Marshal(a)
			return text(string(b)), nil
		})
	add("fail", "Always report a tool error.", `{"type":"object"}`,
		func(map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it failed on purpose"}}}, nil
		})
	add("pdf_to_text", "Convert a PDF document to plain text.", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		func(a map[string]any) (*sdk.CallToolResult, error) {
			return text("text of " + fmt.Sprint(a["path"])), nil
		})
	add("pid", "Return the server's process id.", `{"type":"object"}`,
		func(map[string]any) (*sdk.CallToolResult, error) { return text(fmt.Sprint(os.Getpid())), nil })
	add("env", "Return an environment variable and the working directory.", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		func(a map[string]any) (*sdk.CallToolResult, error) {
			wd, _ := os.Getwd()
			return text(os.Getenv(fmt.Sprint(a["name"])) + "|" + wd), nil
		})
	add("dial", "Try a TCP connection and report whether it worked.", `{"type":"object","properties":{"addr":{"type":"string"}},"required":["addr"]}`,
		func(a map[string]any) (*sdk.CallToolResult, error) {
			c, err := net.DialTimeout("tcp", fmt.Sprint(a["addr"]), 2*time.Second)
			if err != nil {
				return text("dial failed: " + err.Error()), nil
			}
			c.Close()
			return text("dial ok"), nil
		})
	add("crash", "Terminate the server abruptly.", `{"type":"object"}`,
		func(map[string]any) (*sdk.CallToolResult, error) {
			crash()
			return text("crashed"), nil
		})
	addResources(s)
	return s
}

// Blob is the binary resource mem://data/blob.bin: bytes no text holds.
var Blob = []byte{0, 1, 2, 0xfe, 0xff, 'b', 'i', 'n'}

// ReadmeText is the text of the resource mem://docs/readme.
const ReadmeText = "# Readme\nThe test server's documentation.\n"

// addResources gives the server resources (text, binary, an image), a
// resource template and prompts (one with arguments and an embedded
// resource), so that listing and reading them can be tested.
func addResources(s *sdk.Server) {
	textRes := func(uri, mime, body string) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		}
	}
	blobRes := func(uri, mime string, data []byte) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Blob: data}}}, nil
		}
	}
	s.AddResource(&sdk.Resource{URI: "mem://docs/readme", Name: "readme", Title: "Readme", MIMEType: "text/markdown", Description: "How to use the test server."},
		textRes("mem://docs/readme", "text/markdown", ReadmeText))
	s.AddResource(&sdk.Resource{URI: "mem://data/blob.bin", Name: "blob", MIMEType: "application/octet-stream", Size: int64(len(Blob))},
		blobRes("mem://data/blob.bin", "application/octet-stream", Blob))
	s.AddResource(&sdk.Resource{URI: "mem://img/logo.png", Name: "logo", MIMEType: "image/png"},
		blobRes("mem://img/logo.png", "image/png", PNG()))
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "mem://notes/{id}", Name: "note", MIMEType: "text/plain", Description: "A note by id."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			uri := req.Params.URI
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "note " + uri[len("mem://notes/"):]}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greet someone.", Arguments: []*sdk.PromptArgument{
		{Name: "name", Description: "Who to greet.", Required: true},
		{Name: "tone", Description: "How: warm or dry."},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		tone := req.Params.Arguments["tone"]
		if tone == "" {
			tone = "warm"
		}
		return &sdk.GetPromptResult{Description: "A greeting.", Messages: []*sdk.PromptMessage{
			{Role: "user", Content: &sdk.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + " in a " + tone + " tone."}},
			{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://docs/readme", MIMEType: "text/markdown", Text: ReadmeText}}},
			{Role: "assistant", Content: &sdk.TextContent{Text: "Hello!"}},
		}}, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "plain", Description: "A prompt without arguments."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "plain prompt"}}}}, nil
		})
}

// AddResourceTools adds the tools that exercise resource handling in
// results: "structured" (text and different structuredContent), "links"
// (a resource link and an embedded blob) and "publish" (adds a resource
// and a prompt, so the server sends list_changed notifications).
func AddResourceTools(s *sdk.Server) {
	s.AddTool(&sdk.Tool{Name: "structured", Description: "Return a text summary and structured data.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Sunny in Paris"}},
				StructuredContent: map[string]any{"city": "Paris", "temperature": 21}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "links", Description: "Return a resource link and an embedded binary resource.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.ResourceLink{URI: "mem://docs/readme", Name: "readme", MIMEType: "text/markdown"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://data/blob.bin", MIMEType: "application/octet-stream", Blob: Blob}},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "publish", Description: "Publish a resource mem://published/<name> and a prompt <name>.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Name string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			uri := "mem://published/" + args.Name
			s.AddResource(&sdk.Resource{URI: uri, Name: args.Name, MIMEType: "text/plain"},
				func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
					return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "published " + args.Name}}}, nil
				})
			s.AddPrompt(&sdk.Prompt{Name: args.Name, Description: "Published."},
				func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
					return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: args.Name}}}}, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "published " + uri}}}, nil
		})
}

// ServeStdio serves the test server on stdin/stdout until the client
// leaves; resourceTools adds AddResourceTools' tools.
func ServeStdio(ctx context.Context, resourceTools bool) error {
	s := NewServer(nil)
	if resourceTools {
		AddResourceTools(s)
	}
	return s.Run(ctx, &sdk.StdioTransport{})
}

// HTTPHandler serves the test server over streamable HTTP.
func HTTPHandler(crash func()) http.Handler {
	s := NewServer(crash)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
}

// SSEHandler serves the test server over the older HTTP+SSE transport.
func SSEHandler(crash func()) http.Handler {
	s := NewServer(crash)
	return sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
}
