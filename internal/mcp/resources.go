package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// ResourceInfo is one resource a server lists.
type ResourceInfo struct {
	URI, Name, Description, MIMEType string
	Size                             int64 // 0: not said
}

// TemplateInfo is one resource template (an RFC 6570 URI template) a server lists.
type TemplateInfo struct {
	URITemplate, Name, Description, MIMEType string
}

// PromptInfo is one prompt a server lists.
type PromptInfo struct {
	Server, Name, Description string
	Args                      []PromptArg
}

// PromptArg is one argument of a prompt (prompt arguments are strings).
type PromptArg struct {
	Name, Description string
	Required          bool
}

// Command is the command line that gets the prompt, with its required
// arguments as placeholders.
func (p PromptInfo) Command() string {
	cmd := CommandPrefix(p.Server) + PromptCmd + " " + quoteArg(p.Name)
	for _, a := range p.Args {
		if a.Required {
			cmd += " " + a.Name + "=<" + a.Name + ">"
		}
	}
	return cmd
}

// ResourceList is what a server publishes as resources.
type ResourceList struct {
	// Declared: the server declares the resources capability.
	Declared  bool
	Resources []ResourceInfo
	Templates []TemplateInfo
	// Notes say what was left out and why (bad URIs, pages past the bound,
	// a templates list the server refused).
	Notes []string
}

// PromptList is what a server publishes as prompts.
type PromptList struct {
	Declared bool // the server declares the prompts capability
	Prompts  []PromptInfo
	Notes    []string
}

// listKind names one of a server's lists.
type listKind int

const (
	kindTools listKind = iota
	kindResources
	kindPrompts
	numLists
)

type refreshState struct{ running, again bool }

// serverLists are a server's resources and prompts as last listed.
type serverLists struct {
	resources ResourceList
	prompts   PromptList
}

// merge takes the list which from o.
func (l *serverLists) merge(o serverLists, which listKind) {
	switch which {
	case kindResources:
		l.resources = o.resources
	case kindPrompts:
		l.prompts = o.prompts
	}
}

// fetchLists lists which (resources and templates, or prompts) when the
// server declares it, into a copy of base. A failure is a note: resources
// and prompts are extras next to the tools.
func fetchLists(ctx context.Context, sess *sdk.ClientSession, server string, which listKind, base serverLists) serverLists {
	out := base
	switch which {
	case kindResources:
		rl, err := fetchResources(ctx, sess, server)
		if err != nil {
			rl.Notes = append(rl.Notes, "listing the resources failed: "+oneLine(err.Error()))
		}
		out.resources = rl
	case kindPrompts:
		pl, err := fetchPrompts(ctx, sess, server)
		if err != nil {
			pl.Notes = append(pl.Notes, "listing the prompts failed: "+oneLine(err.Error()))
		}
		out.prompts = pl
	}
	return out
}

func capabilities(sess *sdk.ClientSession) *sdk.ServerCapabilities {
	if ir := sess.InitializeResult(); ir != nil && ir.Capabilities != nil {
		return ir.Capabilities
	}
	return &sdk.ServerCapabilities{}
}

// fetchResources lists a server's resources and resource templates (none,
// without an error, when it does not declare the capability).
func fetchResources(ctx context.Context, sess *sdk.ClientSession, server string) (ResourceList, error) {
	if capabilities(sess).Resources == nil {
		return ResourceList{}, nil
	}
	rl := ResourceList{Declared: true}
	res, cut, err := pages(ctx, "resource", func(ctx context.Context, cursor string) ([]*sdk.Resource, string, error) {
		r, err := sess.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	})
	if err != nil {
		return rl, err
	}
	rl.Notes = append(rl.Notes, cut...)
	var bad []string
	for _, r := range res {
		if r == nil {
			continue
		}
		if !validURI(r.URI) {
			bad = append(bad, strconv.Quote(textutil.OneLine(textutil.Sanitize(r.URI), 60)))
			continue
		}
		rl.Resources = append(rl.Resources, ResourceInfo{URI: r.URI, Name: cleanText(cmpOr(r.Title, r.Name), 200),
			Description: cleanText(r.Description, maxToolDescription), MIMEType: cleanText(r.MIMEType, 100), Size: r.Size})
	}
	if len(bad) > 0 {
		rl.Notes = append(rl.Notes, fmt.Sprintf("%d resources are not offered: their URIs are empty, over %d bytes or hold control characters: %s",
			len(bad), maxURI, strings.Join(bad[:min(len(bad), 5)], ", ")))
	}
	tmpls, cut, err := pages(ctx, "resource template", func(ctx context.Context, cursor string) ([]*sdk.ResourceTemplate, string, error) {
		r, err := sess.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.ResourceTemplates, r.NextCursor, nil
	})
	if err != nil {
		// Templates are optional: a server may list resources and not them
		// (without a word when it does not know the method).
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeMethodNotFound {
			rl.Notes = append(rl.Notes, "listing the resource templates failed: "+oneLine(err.Error()))
		}
		return rl, nil
	}
	rl.Notes = append(rl.Notes, cut...)
	for _, t := range tmpls {
		if t == nil || !validURI(t.URITemplate) {
			continue
		}
		rl.Templates = append(rl.Templates, TemplateInfo{URITemplate: t.URITemplate, Name: cleanText(cmpOr(t.Title, t.Name), 200),
			Description: cleanText(t.Description, maxToolDescription), MIMEType: cleanText(t.MIMEType, 100)})
	}
	return rl, nil
}

// fetchPrompts lists a server's prompts (none, without an error, when it
// does not declare the capability).
func fetchPrompts(ctx context.Context, sess *sdk.ClientSession, server string) (PromptList, error) {
	if capabilities(sess).Prompts == nil {
		return PromptList{}, nil
	}
	pl := PromptList{Declared: true}
	ps, cut, err := pages(ctx, "prompt", func(ctx context.Context, cursor string) ([]*sdk.Prompt, string, error) {
		r, err := sess.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
	if err != nil {
		return pl, err
	}
	pl.Notes = append(pl.Notes, cut...)
	var bad []string
	for _, p := range ps {
		if p == nil {
			continue
		}
		if !validToolName(p.Name) {
			bad = append(bad, strconv.Quote(textutil.OneLine(textutil.Sanitize(p.Name), 40)))
			continue
		}
		info := PromptInfo{Server: server, Name: p.Name, Description: cleanText(cmpOr(p.Description, p.Title), maxToolDescription)}
		for _, a := range p.Arguments {
			if a == nil || !validToolName(a.Name) {
				continue
			}
			info.Args = append(info.Args, PromptArg{Name: a.Name, Description: cleanText(cmpOr(a.Description, a.Title), 2000), Required: a.Required})
		}
		pl.Prompts = append(pl.Prompts, info)
	}
	sort.Slice(pl.Prompts, func(i, j int) bool { return pl.Prompts[i].Name < pl.Prompts[j].Name })
	if len(bad) > 0 {
		pl.Notes = append(pl.Notes, fmt.Sprintf("%d prompts are not offered: their names cannot be command words (1 to %d letters, digits and _ - . / :): %s",
			len(bad), maxToolName, strings.Join(bad[:min(len(bad), 5)], ", ")))
	}
	return pl, nil
}

// pages reads every page of a list, up to maxToolPages; cut says when it
// stopped there.
func pages[T any](ctx context.Context, what string, fetch func(ctx context.Context, cursor string) ([]T, string, error)) (_ []T, cut []string, _ error) {
	var out []T
	cursor := ""
	for page := 0; ; page++ {
		if page == maxToolPages {
			return out, []string{fmt.Sprintf("the server's %s list has more pages than %d: the first %d are shown", what, maxToolPages, maxToolPages)}, nil
		}
		items, next, err := fetch(ctx, cursor)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, items...)
		if next == "" || next == cursor {
			return out, nil, nil
		}
		cursor = next
	}
}

// maxURI bounds a resource URI (or template) that is offered.
const maxURI = 4096

// validURI reports whether a server's URI can be shown and given back to
// it: not empty, bounded, UTF-8, and without control characters (they
// would drive the terminal or break the command line).
func validURI(u string) bool {
	if u == "" || len(u) > maxURI || !utf8.ValidString(u) {
		return false
	}
	for _, c := range u {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) {
			return false
		}
	}
	return true
}

// cleanText is a server's text made safe to show: no terminal escapes, at
// most max characters.
func cleanText(s string, max int) string {
	return textutil.Truncate(textutil.Sanitize(s), max)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Resources lists a server's resources and templates, asking the server
// (the cached list, kept for command:search and listings, is updated).
func (m *Manager) Resources(ctx context.Context, server string) (ResourceList, bool, error) {
	var rl ResourceList
	reconnected, err := m.request(ctx, server, "the resource list", func(ctx context.Context, sess *sdk.ClientSession) (err error) {
		rl, err = fetchResources(ctx, sess, server)
		if err == nil {
			m.mustLookup(server).store(sess, serverLists{resources: rl}, kindResources)
		}
		return err
	})
	return rl, reconnected, err
}

// Prompts lists a server's prompts, asking the server (the cached list is
// updated).
func (m *Manager) Prompts(ctx context.Context, server string) (PromptList, bool, error) {
	var pl PromptList
	reconnected, err := m.request(ctx, server, "the prompt list", func(ctx context.Context, sess *sdk.ClientSession) (err error) {
		pl, err = fetchPrompts(ctx, sess, server)
		if err == nil {
			m.mustLookup(server).store(sess, serverLists{prompts: pl}, kindPrompts)
		}
		return err
	})
	return pl, reconnected, err
}

// store keeps a list fetched on sess, if sess is still the server's
// session (s nil: the server was removed meanwhile).
func (s *server) store(sess *sdk.ClientSession, l serverLists, which listKind) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == sess {
		s.lists.merge(l, which)
	}
}

// ReadResource reads one resource by its URI.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, bool, error) {
	var res *sdk.ReadResourceResult
	reconnected, err := m.request(ctx, server, "reading "+uri, func(ctx context.Context, sess *sdk.ClientSession) (err error) {
		res, err = sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		return err
	})
	return res, reconnected, err
}

// GetPrompt gets one prompt with its arguments filled in.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*sdk.GetPromptResult, bool, error) {
	var res *sdk.GetPromptResult
	reconnected, err := m.request(ctx, server, "the prompt "+name, func(ctx context.Context, sess *sdk.ClientSession) (err error) {
		res, err = sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	return res, reconnected, err
}

// CachedResources is a connected server's resource list as last listed
// (at connection, on list_changed, or by a listing command); no request
// is made.
func (m *Manager) CachedResources(server string) ResourceList {
	s, ok := m.lookup(server)
	if !ok {
		return ResourceList{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists.resources
}

// CachedPrompts is a connected server's prompt list as last listed; no
// request is made.
func (m *Manager) CachedPrompts(server string) PromptList {
	s, ok := m.lookup(server)
	if !ok {
		return PromptList{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists.prompts
}
