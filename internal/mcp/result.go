package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// maxImageBytes bounds one image handed to the model (Anthropic refuses
// images over 5 MB; larger ones are only named in the text).
const maxImageBytes = 5 << 20

// imageTypes are the image formats both providers accept.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// BlobSaver saves binary data a server sent (a blob resource, audio) to a
// file the model can reach and returns its path; ext is a file name
// extension for the data's type ("" when none fits).
type BlobSaver func(data []byte, ext string) (string, error)

// FormatToolResult renders a tool result of server as text plus the images
// to show the model: text content as it is; each image (and image blob
// resource) named in the text, with its bytes returned for providers that
// take images; resource links summarised (what they are, where, how big)
// with the command that reads them (when server is not ""); embedded text resources with their
// URI; binary blobs, audio and images not attached saved through save (when not nil) and named
// by their path; the structured content as JSON after the text, unless a
// text block already holds the same JSON.
func FormatToolResult(res *sdk.CallToolResult, server string, save BlobSaver) (string, []command.Image) {
	if res == nil {
		return "", nil
	}
	f := formatter{server: server, save: save}
	for _, c := range res.Content {
		f.content(c)
	}
	if res.StructuredContent != nil {
		f.structured(res.StructuredContent, res.Content)
	}
	return f.text(), f.images
}

// formatter collects the model's view of MCP content: text parts and images.
type formatter struct {
	server string
	save   BlobSaver
	parts  []string
	images []command.Image
}

func (f *formatter) text() string {
	out := strings.Join(f.parts, "\n")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// image attaches an image the providers take, or names it and saves it
// (when a saver is set) so that commands can use the file.
func (f *formatter) image(what, mime string, data []byte) {
	if imageTypes[mime] && len(data) > 0 && len(data) <= maxImageBytes {
		f.images = append(f.images, command.Image{MediaType: mime, Data: data})
		f.parts = append(f.parts, fmt.Sprintf("[%s: %s, %s, attached as image %d]", what, mime, byteSize(int64(len(data))), len(f.images)))
		return
	}
	why := "not shown: only png, jpeg, gif and webp images up to 5 MB are passed on"
	f.parts = append(f.parts, fmt.Sprintf("[%s: %s, %s, %s%s]", what, orUnknown(mime), byteSize(int64(len(data))), why, f.saved(data, mime)))
}

// saved saves data and says where (", saved to PATH"), or why not; ""
// without a saver.
func (f *formatter) saved(data []byte, mime string) string {
	if f.save == nil || len(data) == 0 {
		return ""
	}
	path, err := f.save(data, extension(mime))
	if err != nil {
		return ", could not be saved: " + err.Error()
	}
	return ", saved to " + path
}

// blob names binary data that is not an image: saved to a file when a
// saver is set, never dumped into the text.
func (f *formatter) blob(what, mime string, data []byte) {
	saved := f.saved(data, mime)
	if saved == "" {
		saved = ", not shown as text"
	}
	f.parts = append(f.parts, fmt.Sprintf("[%s: %s, %s of binary data%s]", what, orUnknown(mime), byteSize(int64(len(data))), saved))
}

func (f *formatter) content(c sdk.Content) {
	switch x := c.(type) {
	case *sdk.TextContent:
		f.parts = append(f.parts, x.Text)
	case *sdk.ImageContent:
		f.image("image", x.MIMEType, x.Data)
	case *sdk.AudioContent:
		saved := f.saved(x.Data, x.MIMEType)
		f.parts = append(f.parts, fmt.Sprintf("[audio: %s, %s, not shown: audio is not passed to the model%s]", orUnknown(x.MIMEType), byteSize(int64(len(x.Data))), saved))
	case *sdk.ResourceLink:
		f.parts = append(f.parts, linkSummary(x, f.server))
	case *sdk.EmbeddedResource:
		if x.Resource == nil {
			f.parts = append(f.parts, "[embedded resource with no contents]")
			return
		}
		f.resource("embedded resource", x.Resource)
	case nil:
	default:
		f.parts = append(f.parts, fmt.Sprintf("[%T content, not shown as text]", c))
	}
}

// resource renders one resource's contents (embedded in a result, or read):
// text under a line naming its URI and type; image blobs attached; other
// blobs saved.
func (f *formatter) resource(what string, r *sdk.ResourceContents) {
	uri := textutil.Sanitize(r.URI)
	switch {
	case r.Text != "" || len(r.Blob) == 0:
		head := "[" + what + " " + uri
		if r.MIMEType != "" {
			head += ", " + textutil.Sanitize(r.MIMEType)
		}
		f.parts = append(f.parts, head+"]\n"+r.Text)
	case imageTypes[r.MIMEType]:
		f.image(what+" "+uri, r.MIMEType, r.Blob)
	case textType(r.MIMEType) && utf8.Valid(r.Blob) && !bytes.ContainsRune(r.Blob, 0):
		// Text sent base64-encoded is text: shown, not saved.
		f.parts = append(f.parts, "["+what+" "+uri+", "+textutil.Sanitize(r.MIMEType)+", sent as a blob]\n"+string(r.Blob))
	default:
		f.blob(what+" "+uri, textutil.Sanitize(r.MIMEType), r.Blob)
	}
}

// structured adds a result's structuredContent as JSON, or, when one of
// the text blocks already holds the same JSON (as the specification asks
// servers to send for older clients), a line saying so.
func (f *formatter) structured(v any, content []sdk.Content) {
	b, err := json.Marshal(v)
	if err != nil {
		f.parts = append(f.parts, fmt.Sprintf("[structured content that is not JSON: %v]", err))
		return
	}
	var norm any
	_ = json.Unmarshal(b, &norm)
	for _, c := range content {
		t, ok := c.(*sdk.TextContent)
		if !ok {
			continue
		}
		var got any
		if json.Unmarshal([]byte(t.Text), &got) == nil && reflect.DeepEqual(got, norm) {
			f.parts = append(f.parts, "[structured content: the same JSON as the text above]")
			return
		}
	}
	pretty, err := json.MarshalIndent(norm, "", "  ")
	if err != nil {
		pretty = b
	}
	if len(f.parts) == 0 {
		f.parts = append(f.parts, string(pretty))
		return
	}
	f.parts = append(f.parts, "[structured content]\n"+string(pretty))
}

// textType reports whether a MIME type is text a model reads as such.
func textType(mime string) bool {
	mime, _, _ = strings.Cut(strings.ToLower(mime), ";")
	mime = strings.TrimSpace(mime)
	switch {
	case strings.HasPrefix(mime, "text/"), mime == "application/json", mime == "application/xml",
		strings.HasSuffix(mime, "+json"), strings.HasSuffix(mime, "+xml"):
		return true
	}
	return false
}

// extension is a file name extension for a MIME type, "" when none fits;
// only a short list of common types, chosen here rather than from the
// system's MIME database, so that a file's name does not depend on the host.
func extension(mime string) string {
	mime, _, _ = strings.Cut(mime, ";")
	switch strings.TrimSpace(strings.ToLower(mime)) {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "application/pdf":
		return ".pdf"
	case "application/gzip":
		return ".gz"
	case "application/zip":
		return ".zip"
	case "application/json":
		return ".json"
	case "text/plain":
		return ".txt"
	case "audio/wav", "audio/x-wav":
		return ".wav"
	case "audio/mpeg":
		return ".mp3"
	}
	return ".bin"
}

// linkSummary names a resource link with everything the server said about
// it, so the model can decide whether to fetch it, and the command that
// reads it (when the server is known).
func linkSummary(l *sdk.ResourceLink, server string) string {
	var b strings.Builder
	b.WriteString("[resource link: " + textutil.Sanitize(l.URI))
	name := l.Title
	if name == "" {
		name = l.Name
	}
	if name != "" {
		b.WriteString(" (" + textutil.OneLine(textutil.Sanitize(name), 200) + ")")
	}
	if l.MIMEType != "" {
		b.WriteString(", " + textutil.Sanitize(l.MIMEType))
	}
	if l.Size != nil {
		b.WriteString(", " + byteSize(*l.Size))
	}
	b.WriteString("]")
	if d := strings.Join(strings.Fields(textutil.Sanitize(l.Description)), " "); d != "" {
		b.WriteString(" " + d)
	}
	if server != "" && validURI(l.URI) {
		b.WriteString("\n  read it: " + ReadCommand(server, l.URI))
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
