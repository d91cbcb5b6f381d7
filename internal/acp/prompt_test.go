package acp

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestDecodeImage(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))
	for _, tc := range []struct {
		mime, data string
		err        string // "" when accepted
	}{
		{"image/png", png, ""},
		{"image/webp", png, ""},
		{"image/bmp", png, `"image/bmp" is not supported`},
		{"image/png", "not base64!", "not base64"},
		{"image/png", "", "no data"},
		{"image/jpeg", base64.StdEncoding.EncodeToString(make([]byte, maxImageBytes+1)), "the limit is 5 MB"},
	} {
		img, err := decodeImage(tc.mime, tc.data)
		switch {
		case tc.err == "" && (err != nil || img.MediaType != tc.mime || len(img.Data) == 0):
			t.Errorf("%s %.10q: %+v, %v", tc.mime, tc.data, img.MediaType, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %.10q: error %v, want %q", tc.mime, tc.data, err, tc.err)
		}
	}
}

func TestLocalPath(t *testing.T) {
	for _, tc := range []struct {
		uri, path string
		ok        bool
	}{
		{"file:///home/u/a.go", "/home/u/a.go", true},
		{"file://localhost/home/u/a%20b.go", "/home/u/a b.go", true},
		{"/abs/x/../y.txt", "/abs/y.txt", true},
		{"file://otherhost/a", "", false},
		{"https://example.com/a", "", false},
		{"zed:///agent/thread", "", false},
		{"file:relative", "", false},
	} {
		got, ok := localPath(tc.uri)
		if got != tc.path || ok != tc.ok {
			t.Errorf("localPath(%q) = %q, %v; want %q, %v", tc.uri, got, ok, tc.path, tc.ok)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"line one\nline two\nline three\n", 20, "line one\nline two\n", true},
		{"ééééé", 5, "éé", true}, // never inside a character
		{"abc", 0, "", true},
	} {
		got, cut := clip(tc.in, tc.max)
		if got != tc.want || cut != tc.cut {
			t.Errorf("clip(%q, %d) = %q, %v; want %q, %v", tc.in, tc.max, got, cut, tc.want, tc.cut)
		}
	}
}

// A prompt with an image, an embedded file, a linked file, a link
// elsewhere and a link to a file the sandbox hides reaches the model as
// an image block and text with each file's path and content; the hidden
// file's content does not.
func TestPromptImagesAndResources(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorldIn(t, testutil.OutsideTmp(t), llmtest.TextTurn("I see a cat."))
	if pc := w.init.AgentCapabilities.PromptCapabilities; !pc.Image || !pc.EmbeddedContext || pc.Audio {
		t.Errorf("promptCapabilities = %+v, want image and embeddedContext", pc)
	}
	id := w.newSession(t)
	png := []byte("\x89PNG\r\n\x1a\nfake-cat")
	linked := filepath.Join(w.proj, "src", "main.go")
	testutil.WriteFile(t, linked, "package main\n\nfunc main() {}\n")
	secret := filepath.Join(w.env["HOME"], ".ssh", "id_rsa")
	testutil.WriteFile(t, secret, "PRIVATE-KEY-MATERIAL\n")
	prompt := []sdk.ContentBlock{
		sdk.TextBlock("what is in the picture?"),
		sdk.ImageBlock(base64.StdEncoding.EncodeToString(png), "image/png"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{
			Uri: "file://" + filepath.Join(w.proj, "notes.md"), Text: "# Notes\nembedded body\n"}}),
		sdk.ResourceLinkBlock("main.go", "file://"+linked),
		sdk.ResourceLinkBlock("docs", "https://example.com/docs"),
		sdk.ResourceLinkBlock("id_rsa", "file://"+secret),
	}
	res, err := w.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: prompt})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	req := w.srv.Requests()[0]
	var user llmtest.Message
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m
		}
	}
	if len(user.Images) != 1 || user.Images[0].MediaType != "image/png" || string(user.Images[0].Data) != string(png) {
		t.Fatalf("user message images = %+v, want the png", user.Images)
	}
	for _, want := range []string{
		"what is in the picture?",
		"[image 1: image/png",
		"Content of " + filepath.Join(w.proj, "notes.md") + ":\n```\n# Notes\nembedded body\n```",
		"Content of " + linked + " (as `read` shows it", "func main() {}",
		"[docs](https://example.com/docs)",
		"[file " + secret + ": could not be read: the sandbox does not allow reading it",
	} {
		if !strings.Contains(user.Text, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user.Text)
		}
	}
	if strings.Contains(string(req.Raw), "PRIVATE-KEY-MATERIAL") {
		t.Error("a file the sandbox hides reached the model")
	}
	// The session's title is what the person wrote, not the attachments.
	list, err := w.conn.ListSessions(context.Background(), sdk.ListSessionsRequest{Cwd: &w.proj})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "what is in the picture?" {
		t.Errorf("listed sessions = %+v", list.Sessions)
	}
}

// Bad content is refused with an error that names the block; nothing is
// sent to the model.
func TestPromptBadContent(t *testing.T) {
	w := newWorld(t, llmtest.TextTurn("hello"))
	id := w.newSession(t)
	for _, tc := range []struct {
		block sdk.ContentBlock
		want  string
	}{
		{sdk.ImageBlock("%%%", "image/png"), "prompt[1]: the image/png image's data is not base64"},
		{sdk.ImageBlock("AAAA", "image/tiff"), "is not supported: attach png, jpeg, gif or webp"},
		{sdk.AudioBlock("AAAA", "audio/wav"), "prompt[1]: audio is not supported"},
	} {
		_, err := w.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("look"), tc.block}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	if _, err := w.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("  ")}}); err == nil || !strings.Contains(err.Error(), "the prompt is empty") {
		t.Errorf("empty prompt: %v", err)
	}
	if n := w.srv.Count(); n != 0 {
		t.Errorf("%d model requests for refused prompts", n)
	}
	// The session still works.
	if res := w.prompt(t, id, "hi"); res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("after refused prompts: stop reason %q", res.StopReason)
	}
}
