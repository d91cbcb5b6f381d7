package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// FormatResult renders a tool result as text: text content as it is, a
// one-line note for each non-text item (images, audio, binary resources are
// not shown), and the structured content as JSON when there is nothing else.
func FormatResult(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image content: %s, %d bytes, not shown as text]", orUnknown(x.MIMEType), len(x.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio content: %s, %d bytes, not shown as text]", orUnknown(x.MIMEType), len(x.Data)))
		case *sdk.ResourceLink:
			note := fmt.Sprintf("[resource link: %s", x.URI)
			if x.Name != "" {
				note += " (" + x.Name + ")"
			}
			if x.MIMEType != "" {
				note += ", " + x.MIMEType
			}
			parts = append(parts, note+"]")
		case *sdk.EmbeddedResource:
			r := x.Resource
			switch {
			case r == nil:
				parts = append(parts, "[embedded resource with no contents]")
			case r.Text != "" || len(r.Blob) == 0:
				parts = append(parts, fmt.Sprintf("[embedded resource %s]\n%s", r.URI, r.Text))
			default:
				parts = append(parts, fmt.Sprintf("[embedded resource %s: %s, %d bytes, not shown as text]", r.URI, orUnknown(r.MIMEType), len(r.Blob)))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T content, not shown as text]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, err := json.MarshalIndent(res.StructuredContent, "", "  ")
		if err == nil {
			parts = append(parts, string(b))
		}
	}
	out := strings.Join(parts, "\n")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
