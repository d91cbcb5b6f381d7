package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synapse-agent/synapse/internal/command"
)

// maxImageBytes bounds one image handed to the model (Anthropic refuses
// images over 5 MB; larger ones are only named in the text).
const maxImageBytes = 5 << 20

// imageTypes are the image formats both providers accept.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// FormatResult renders a tool result as text plus the images to show the
// model: text content as it is; each image (and image blob resource) named
// in the text, with its bytes returned for providers that take images;
// resource links and embedded resources summarised (what they are, where,
// how big); the structured content as JSON when there is nothing else.
func FormatResult(res *sdk.CallToolResult) (string, []command.Image) {
	if res == nil {
		return "", nil
	}
	var parts []string
	var images []command.Image
	addImage := func(what, mime string, data []byte) {
		if imageTypes[mime] && len(data) > 0 && len(data) <= maxImageBytes {
			images = append(images, command.Image{MediaType: mime, Data: data})
			parts = append(parts, fmt.Sprintf("[%s: %s, %s, attached as image %d]", what, mime, byteSize(int64(len(data))), len(images)))
			return
		}
		why := "not shown: only png, jpeg, gif and webp images up to 5 MB are passed on"
		parts = append(parts, fmt.Sprintf("[%s: %s, %s, %s]", what, orUnknown(mime), byteSize(int64(len(data))), why))
	}
	for _, c := range res.Content {
		switch x := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.ImageContent:
			addImage("image", x.MIMEType, x.Data)
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %s, not shown: audio is not passed to the model]", orUnknown(x.MIMEType), byteSize(int64(len(x.Data)))))
		case *sdk.ResourceLink:
			parts = append(parts, linkSummary(x))
		case *sdk.EmbeddedResource:
			r := x.Resource
			switch {
			case r == nil:
				parts = append(parts, "[embedded resource with no contents]")
			case r.Text != "" || len(r.Blob) == 0:
				head := "[embedded resource " + r.URI
				if r.MIMEType != "" {
					head += ", " + r.MIMEType
				}
				parts = append(parts, head+"]\n"+r.Text)
			case imageTypes[r.MIMEType]:
				addImage("embedded image "+r.URI, r.MIMEType, r.Blob)
			default:
				parts = append(parts, fmt.Sprintf("[embedded resource %s: %s, %s of binary data, not shown as text]", r.URI, orUnknown(r.MIMEType), byteSize(int64(len(r.Blob)))))
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
	return out, images
}

// linkSummary names a resource link with everything the server said about
// it, so the model can decide whether to fetch it.
func linkSummary(l *sdk.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link: " + l.URI)
	name := l.Title
	if name == "" {
		name = l.Name
	}
	if name != "" {
		b.WriteString(" (" + name + ")")
	}
	if l.MIMEType != "" {
		b.WriteString(", " + l.MIMEType)
	}
	if l.Size != nil {
		b.WriteString(", " + byteSize(*l.Size))
	}
	b.WriteString("]")
	if d := strings.Join(strings.Fields(l.Description), " "); d != "" {
		b.WriteString(" " + d)
	}
	return b.String()
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
