package acp

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/llm"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// Bounds on what a prompt carries besides its own words.
const (
	// maxFileBytes bounds one embedded or linked file's text handed to the
	// model; the rest is left for the agent to read itself.
	maxFileBytes = 64 << 10
	// maxContextBytes bounds all attached files' text of one prompt.
	maxContextBytes = 256 << 10
	// maxImageBytes is Anthropic's limit for one image.
	maxImageBytes = 5 << 20
	// fileLines is how many lines of a linked file are read.
	fileLines = 2000
)

// imageTypes are the image formats both providers accept.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// prompt is an ACP prompt turned into what the model gets: the text, with
// each attachment inlined or named in it, and the images.
type prompt struct {
	text   string
	images []llm.Image
	typed  string // the text blocks alone: what the person wrote
}

// promptInput joins the prompt's blocks: text as it is; an image as an
// image block, named in the text; an embedded text resource and a linked
// local file as their path and content (bounded); other links as links.
// A block the model cannot be given (a broken image, an unsupported
// format) is an error that says so, not a silent drop.
//
// readFile fetches a linked file's text: the session's is the agent's own
// `read`, so the sandbox policy decides what may be read, no symlink leads
// where it refuses, and binary files are refused.
func promptInput(ctx context.Context, blocks []sdk.ContentBlock, readFile func(ctx context.Context, path string) (string, error)) (prompt, error) {
	var p prompt
	var parts, typed []string
	budget := maxContextBytes
	file := func(name, body string) string {
		limit := min(maxFileBytes, budget)
		body, cut := clip(body, limit)
		budget -= len(body)
		// The fence is longer than any run of backticks in the file, so
		// the file cannot close it and go on as the person's own words.
		s := fmt.Sprintf("Content of %s:\n%s", name, codeBlock(body))
		if cut {
			s += fmt.Sprintf("\n(cut at %d KB: read the file for the rest)", limit>>10)
		}
		return s
	}
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
			typed = append(typed, b.Text.Text)
		case b.Image != nil:
			img, err := decodeImage(b.Image.MimeType, b.Image.Data)
			if err != nil {
				return prompt{}, fmt.Errorf("prompt[%d]: %w", i, err)
			}
			p.images = append(p.images, img)
			parts = append(parts, fmt.Sprintf("[image %d: %s, %d KB, attached]", len(p.images), img.MediaType, (len(img.Data)+1023)>>10))
		case b.Audio != nil:
			return prompt{}, fmt.Errorf("prompt[%d]: audio is not supported: Synapse passes text, images and files to the model", i)
		case b.ResourceLink != nil:
			l := b.ResourceLink
			path, local := localPath(l.Uri)
			if !local {
				parts = append(parts, fmt.Sprintf("[%s](%s)", l.Name, l.Uri))
				continue
			}
			if budget <= 0 {
				parts = append(parts, fmt.Sprintf("[file %s: not inlined (the prompt's attachments are over %d KB); read it yourself]", path, maxContextBytes>>10))
				continue
			}
			out, err := readFile(ctx, path)
			if err != nil {
				parts = append(parts, fmt.Sprintf("[file %s: could not be read: %v]", path, err))
				continue
			}
			parts = append(parts, file(path+" (as `read` shows it, with line numbers)", out))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			name := r.Uri
			if path, ok := localPath(r.Uri); ok {
				name = path
			}
			if budget <= 0 {
				parts = append(parts, fmt.Sprintf("[file %s: not inlined (the prompt's attachments are over %d KB); read it yourself]", name, maxContextBytes>>10))
				continue
			}
			parts = append(parts, file(name, r.Text))
		case b.Resource != nil && b.Resource.Resource.BlobResourceContents != nil:
			r := b.Resource.Resource.BlobResourceContents
			mime := ""
			if r.MimeType != nil {
				mime = *r.MimeType
			}
			if imageTypes[mime] {
				img, err := decodeImage(mime, r.Blob)
				if err != nil {
					return prompt{}, fmt.Errorf("prompt[%d] (%s): %w", i, r.Uri, err)
				}
				p.images = append(p.images, img)
				parts = append(parts, fmt.Sprintf("[image %d: %s, %s, attached]", len(p.images), r.Uri, mime))
				continue
			}
			parts = append(parts, fmt.Sprintf("[binary resource %s (%s), not shown]", r.Uri, orUnknown(mime)))
		default:
			return prompt{}, fmt.Errorf("prompt[%d]: an empty or unknown content block", i)
		}
	}
	p.text = strings.Join(parts, "\n\n")
	p.typed = strings.Join(typed, "\n\n")
	return p, nil
}

// decodeImage checks an image the client sent: base64, a format the
// providers take, within their size limit.
func decodeImage(mime, data string) (llm.Image, error) {
	if !imageTypes[mime] {
		return llm.Image{}, fmt.Errorf("image type %q is not supported: attach png, jpeg, gif or webp", mime)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return llm.Image{}, fmt.Errorf("the %s image's data is not base64: %w", mime, err)
	}
	if len(b) == 0 {
		return llm.Image{}, fmt.Errorf("the %s image has no data", mime)
	}
	if len(b) > maxImageBytes {
		return llm.Image{}, fmt.Errorf("the %s image is %d MB; the limit is %d MB: attach a smaller one", mime, len(b)>>20, maxImageBytes>>20)
	}
	return llm.Image{MediaType: mime, Data: b}, nil
}

// localPath is the absolute path of a file: URI (or of a bare absolute
// path, which some clients send).
func localPath(uri string) (string, bool) {
	if strings.HasPrefix(uri, "/") {
		return filepath.Clean(uri), true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

// clip keeps the first max bytes of s, cut at a line end when one is near
// and never inside a UTF-8 sequence.
func clip(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	if max <= 0 {
		return "", true
	}
	cut := len(textutil.HeadBytes(s, max))
	if nl := strings.LastIndexByte(s[:cut], '\n'); nl > cut/2 {
		cut = nl + 1
	}
	return s[:cut], true
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
