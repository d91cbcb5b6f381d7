package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"

	"github.com/synapse-agent/synapse/internal/cmdline"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// A server's resources and prompts are reached through commands of the
// same mcp:<server>:… family as its tools, under names that start with '@'.
// A tool is offered only when its name has none of that character (see
// validToolName), so these names never hide a tool, whatever the server
// calls its tools ("read", "resources", "prompt" are ordinary tool names).
const (
	// ExtraMark starts the name of every resource and prompt command.
	ExtraMark = "@"
	// ResourcesCmd lists a server's resources and resource templates.
	ResourcesCmd = ExtraMark + "resources"
	// ReadCmd reads a resource by URI, or a template's URI filled in.
	ReadCmd = ExtraMark + "read"
	// PromptsCmd lists a server's prompts.
	PromptsCmd = ExtraMark + "prompts"
	// PromptCmd gets one prompt with its arguments.
	PromptCmd = ExtraMark + "prompt"
)

// extraCommands are the '@' commands, in the order help lists them.
var extraCommands = []string{ResourcesCmd, ReadCmd, PromptsCmd, PromptCmd}

// CommandPrefix is "mcp:<server>:", the start of every command of server.
func CommandPrefix(server string) string { return "mcp:" + server + ":" }

// ReadCommand is the command line that reads uri from server.
func ReadCommand(server, uri string) string {
	return CommandPrefix(server) + ReadCmd + " " + quoteArg(uri)
}

func quoteArg(s string) string { return cmdline.Quote(s) }

// ExtraCommand is one resource or prompt command of a connected server,
// for command:search.
type ExtraCommand struct {
	Server, Command, Description string
	Keywords                     []string
}

// ExtraCommands lists, from the cached lists (no request is made), the
// resource commands of each connected server that declares resources and
// every prompt of those that declare prompts.
func (m *Manager) ExtraCommands() []ExtraCommand {
	var out []ExtraCommand
	for _, s := range m.all() {
		name := s.cfg.Name
		s.mu.Lock()
		connected, lists := s.sess != nil, s.lists
		s.mu.Unlock()
		if !connected {
			continue
		}
		p := CommandPrefix(name)
		if rl := lists.resources; rl.Declared {
			out = append(out,
				ExtraCommand{name, p + ResourcesCmd, fmt.Sprintf("List the resources (%d) and resource templates (%d) of MCP server %s: URIs, names, types, descriptions.", len(rl.Resources), len(rl.Templates), name),
					[]string{name, "resources", "list", "templates", "documents", "files", "uri"}},
				ExtraCommand{name, p + ReadCmd + " <uri>", fmt.Sprintf("Read a resource of MCP server %s by its URI (or fill a resource template with name=value).", name),
					[]string{name, "resource", "read", "open", "fetch", "uri", "document", "template"}})
		}
		if pl := lists.prompts; pl.Declared {
			out = append(out, ExtraCommand{name, p + PromptsCmd, fmt.Sprintf("List the prompts (%d) of MCP server %s with their arguments.", len(pl.Prompts), name),
				[]string{name, "prompts", "list", "templates", "instructions"}})
			for _, pr := range pl.Prompts {
				out = append(out, ExtraCommand{name, p + PromptCmd + " " + quoteArg(pr.Name), cmpOr(pr.Description, "Prompt "+pr.Name+" of MCP server "+name+"."),
					[]string{name, "prompt", pr.Name}})
			}
		}
	}
	return out
}

// runExtra runs one '@' command of server: words are its arguments.
func (h *Handler) runExtra(ctx context.Context, server, cmd string, words []string) command.Result {
	if len(words) == 1 && (words[0] == "-h" || words[0] == "--help") {
		if !slices.Contains(extraCommands, cmd) {
			return unknownExtra(server, cmd)
		}
		return command.OK(extraHelp(server, cmd))
	}
	noArgs := func() command.Result {
		return command.Usage(fmt.Sprintf("%s takes no arguments\n%s", CommandPrefix(server)+cmd, extraUsage(server, cmd)))
	}
	switch cmd {
	case ResourcesCmd:
		if len(words) > 0 {
			return noArgs()
		}
		return h.listResources(ctx, server)
	case PromptsCmd:
		if len(words) > 0 {
			return noArgs()
		}
		return h.listPrompts(ctx, server)
	case ReadCmd:
		if len(words) == 0 {
			return command.Usage("a URI is needed\n" + extraUsage(server, cmd))
		}
		return h.readResource(ctx, server, words[0], words[1:])
	case PromptCmd:
		if len(words) == 0 {
			return command.Usage("a prompt name is needed\n" + extraUsage(server, cmd))
		}
		return h.getPrompt(ctx, server, words[0], words[1:])
	}
	return unknownExtra(server, cmd)
}

func unknownExtra(server, cmd string) command.Result {
	return command.Fail(fmt.Sprintf("unknown command %s: the resource and prompt commands of MCP server %q are %s (each with --help)",
		CommandPrefix(server)+cmd, server, strings.Join(prefixed(server, extraCommands), ", ")))
}

func prefixed(server string, cmds []string) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = CommandPrefix(server) + c
	}
	return out
}

func extraUsage(server, cmd string) string {
	p := CommandPrefix(server) + cmd
	switch cmd {
	case ReadCmd:
		return "Usage: " + p + " <uri>   or   " + p + " '<uri template>' name=value …"
	case PromptCmd:
		return "Usage: " + p + " <name> [argument=value …]"
	}
	return "Usage: " + p
}

func extraHelp(server, cmd string) string {
	p := CommandPrefix(server)
	var b strings.Builder
	b.WriteString(extraUsage(server, cmd) + "\n\n")
	switch cmd {
	case ResourcesCmd:
		fmt.Fprintf(&b, "Lists the resources MCP server %q publishes (URI, name, type, size, description)\n"+
			"and its resource templates (URIs with {variables}). Read one with\n  %s%s <uri>\n"+
			"and fill a template with\n  %s%s '<uri template>' variable=value …\n", server, p, ReadCmd, p, ReadCmd)
	case ReadCmd:
		fmt.Fprintf(&b, "Reads a resource of MCP server %q: text is printed under a line naming its\n"+
			"URI and type; images are attached for the model; other binary data is saved\n"+
			"to a file whose path is printed (read it with the usual commands).\n"+
			"A URI with {variables} is a resource template: give each variable as\n"+
			"name=value (or --name=value) and the URI is filled in (RFC 6570) before reading.\n"+
			"%s%s lists the resources and templates. Reading changes nothing.\n", server, p, ResourcesCmd)
	case PromptsCmd:
		fmt.Fprintf(&b, "Lists the prompts MCP server %q offers, with their arguments. Get one with\n  %s%s <name> argument=value …\n", server, p, PromptCmd)
	case PromptCmd:
		fmt.Fprintf(&b, "Gets a prompt of MCP server %q: its messages, each under its role, with\n"+
			"the arguments filled in (argument=value, --argument=value or --argument value;\n"+
			"values are strings). %s%s <name> --help lists one prompt's arguments;\n"+
			"%s%s lists the prompts. Getting a prompt changes nothing.\n", server, p, PromptCmd, p, PromptsCmd)
	}
	return b.String()
}

func (h *Handler) listResources(ctx context.Context, server string) command.Result {
	rl, reconnected, err := h.M.Resources(ctx, server)
	if err != nil {
		return h.failure(ctx, server, err)
	}
	var b strings.Builder
	if !rl.Declared {
		fmt.Fprintf(&b, "MCP server %q publishes no resources (it does not declare the resources capability).\n", server)
		return h.extraResult(server, b.String(), reconnected)
	}
	fmt.Fprintf(&b, "MCP server %q has %d resources", server, len(rl.Resources))
	if len(rl.Resources) > 0 {
		b.WriteString(":")
	}
	b.WriteString("\n")
	for _, r := range rl.Resources {
		b.WriteString("  " + quoteArg(r.URI))
		var about []string
		if r.Name != "" {
			about = append(about, textutil.OneLine(r.Name, 100))
		}
		if r.MIMEType != "" {
			about = append(about, r.MIMEType)
		}
		if r.Size > 0 {
			about = append(about, byteSize(r.Size))
		}
		if len(about) > 0 {
			b.WriteString("  (" + strings.Join(about, ", ") + ")")
		}
		if d := textutil.OneLine(r.Description, 120); d != "" {
			b.WriteString(" — " + d)
		}
		b.WriteString("\n")
	}
	if len(rl.Templates) > 0 {
		fmt.Fprintf(&b, "Resource templates (%d): fill the {variables} with name=value:\n", len(rl.Templates))
		for _, t := range rl.Templates {
			b.WriteString("  " + quoteArg(t.URITemplate))
			var about []string
			if t.Name != "" {
				about = append(about, textutil.OneLine(t.Name, 100))
			}
			if t.MIMEType != "" {
				about = append(about, t.MIMEType)
			}
			if len(about) > 0 {
				b.WriteString("  (" + strings.Join(about, ", ") + ")")
			}
			if d := textutil.OneLine(t.Description, 120); d != "" {
				b.WriteString(" — " + d)
			}
			b.WriteString("\n")
		}
	}
	for _, n := range rl.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	fmt.Fprintf(&b, "Read one with %s <uri>", CommandPrefix(server)+ReadCmd)
	if len(rl.Templates) > 0 {
		t := rl.Templates[0].URITemplate
		fmt.Fprintf(&b, "; a template with %s %s", CommandPrefix(server)+ReadCmd, quoteArg(t))
		if tmpl, err := uritemplate.New(t); err == nil {
			for _, v := range tmpl.Varnames() {
				b.WriteString(" " + v + "=<value>")
			}
		}
	}
	b.WriteString(".\n")
	return h.extraResult(server, b.String(), reconnected)
}

// extraResult is a listing's result, with the restart note calls get.
func (h *Handler) extraResult(server, out string, reconnected bool) command.Result {
	r := command.OK(out)
	if reconnected {
		r.Stderr = fmt.Sprintf("note: MCP server %q had stopped and was restarted before this call\n", server)
	}
	return r
}

// namedValues reads name=value, --name=value and --name value words.
func namedValues(words []string) (map[string]string, error) {
	vals := map[string]string{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		var k, v string
		switch {
		case strings.HasPrefix(w, "--"):
			name, val, ok := strings.Cut(w[2:], "=")
			if !ok {
				if i+1 >= len(words) {
					return nil, fmt.Errorf("--%s needs a value", name)
				}
				i++
				val = words[i]
			}
			k, v = name, val
		case strings.Contains(w, "="):
			k, v, _ = strings.Cut(w, "=")
		default:
			return nil, fmt.Errorf("%q is not name=value", w)
		}
		if k == "" {
			return nil, fmt.Errorf("%q has no name before =", w)
		}
		if _, dup := vals[k]; dup {
			return nil, fmt.Errorf("%s is given twice", k)
		}
		vals[k] = v
	}
	return vals, nil
}

func (h *Handler) readResource(ctx context.Context, server, uri string, rest []string) command.Result {
	p := CommandPrefix(server) + ReadCmd
	vals, err := namedValues(rest)
	if err != nil {
		return command.Usage(fmt.Sprintf("%s: %v (nothing was read)\n%s", p, err, extraUsage(server, ReadCmd)))
	}
	if strings.Contains(uri, "{") {
		tmpl, err := uritemplate.New(uri)
		if err != nil {
			return command.Usage(fmt.Sprintf("%s: %q is not a URI template: %v (nothing was read)", p, uri, err))
		}
		names := tmpl.Varnames()
		var missing []string
		values := uritemplate.Values{}
		for _, n := range names {
			v, ok := vals[n]
			if !ok {
				missing = append(missing, n+"=<value>")
				continue
			}
			values.Set(n, uritemplate.String(v))
			delete(vals, n)
		}
		if len(missing) > 0 {
			return command.Usage(fmt.Sprintf("%s: the URI is a resource template; give its variables: %s %s %s (nothing was read)", p, p, quoteArg(uri), strings.Join(missing, " ")))
		}
		if len(vals) > 0 {
			return command.Usage(fmt.Sprintf("%s: the template has no variable %s; its variables: %s (nothing was read)", p, strings.Join(sortedKeys(vals), ", "), strings.Join(names, ", ")))
		}
		if uri, err = tmpl.Expand(values); err != nil {
			return command.Usage(fmt.Sprintf("%s: filling the template failed: %v (nothing was read)", p, err))
		}
	} else if len(vals) > 0 {
		return command.Usage(fmt.Sprintf("%s: name=value arguments fill a resource template's {variables}, and %s has none (nothing was read)\n%s", p, quoteArg(uri), extraUsage(server, ReadCmd)))
	}
	ctx, cancel := h.bound(ctx, server)
	defer cancel()
	res, reconnected, err := h.M.ReadResource(ctx, server, uri)
	if err != nil {
		r := h.callFailure(ctx, server, p, err)
		var rejected *RejectedError
		if errors.As(err, &rejected) && !h.M.CachedResources(server).Declared {
			r.Stderr += fmt.Sprintf("\n(MCP server %q declares no resources: it may not serve any.)", server)
		}
		return r
	}
	f := formatter{server: server, save: h.saver()}
	if res == nil || len(res.Contents) == 0 {
		f.parts = append(f.parts, fmt.Sprintf("(MCP server %q returned no contents for %s)", server, uri))
	}
	for _, c := range res.Contents {
		if c != nil {
			f.resource("resource", c)
		}
	}
	r := h.extraResult(server, f.text(), reconnected)
	r.Images = f.images
	return r
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// saver saves blobs to the handler's output directory.
func (h *Handler) saver() BlobSaver {
	return func(data []byte, ext string) (string, error) {
		return fsutil.SaveTemp(h.OutputDir, "mcp-blob-*"+ext, string(data))
	}
}

func (h *Handler) listPrompts(ctx context.Context, server string) command.Result {
	pl, reconnected, err := h.M.Prompts(ctx, server)
	if err != nil {
		return h.failure(ctx, server, err)
	}
	var b strings.Builder
	if !pl.Declared {
		fmt.Fprintf(&b, "MCP server %q offers no prompts (it does not declare the prompts capability).\n", server)
		return h.extraResult(server, b.String(), reconnected)
	}
	fmt.Fprintf(&b, "MCP server %q has %d prompts", server, len(pl.Prompts))
	if len(pl.Prompts) > 0 {
		b.WriteString(":")
	}
	b.WriteString("\n")
	for _, pr := range pl.Prompts {
		fmt.Fprintf(&b, "  %s", pr.Command())
		if d := textutil.OneLine(pr.Description, 120); d != "" {
			b.WriteString(" — " + d)
		}
		b.WriteString("\n")
		for _, a := range pr.Args {
			req := "optional"
			if a.Required {
				req = "required"
			}
			fmt.Fprintf(&b, "      %s (%s)", a.Name, req)
			if d := textutil.OneLine(a.Description, 100); d != "" {
				b.WriteString(": " + d)
			}
			b.WriteString("\n")
		}
	}
	for _, n := range pl.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	fmt.Fprintf(&b, "Get one with %s%s <name> argument=value ….\n", CommandPrefix(server), PromptCmd)
	return h.extraResult(server, b.String(), reconnected)
}

// prompt finds a prompt in the cached list, else in a fresh one.
func (h *Handler) prompt(ctx context.Context, server, name string) (*PromptInfo, []PromptInfo, error) {
	find := func(pl PromptList) *PromptInfo {
		for i := range pl.Prompts {
			if pl.Prompts[i].Name == name {
				return &pl.Prompts[i]
			}
		}
		return nil
	}
	if p := find(h.M.CachedPrompts(server)); p != nil {
		return p, nil, nil
	}
	pl, _, err := h.M.Prompts(ctx, server)
	if err != nil {
		return nil, nil, err
	}
	return find(pl), pl.Prompts, nil
}

func (h *Handler) getPrompt(ctx context.Context, server, name string, rest []string) command.Result {
	p := CommandPrefix(server) + PromptCmd
	info, all, err := h.prompt(ctx, server, name)
	if err != nil {
		return h.failure(ctx, server, err)
	}
	if info == nil {
		names := make([]string, len(all))
		for i, x := range all {
			names[i] = x.Name
		}
		list := "none"
		if len(names) > 0 {
			list = strings.Join(names, ", ")
		}
		return command.Fail(fmt.Sprintf("MCP server %q has no prompt %q. Its prompts: %s\nRun %s%s to list them with their arguments.", server, name, list, CommandPrefix(server), PromptsCmd))
	}
	if len(rest) == 1 && (rest[0] == "-h" || rest[0] == "--help") {
		return command.OK(promptHelp(*info))
	}
	vals, err := namedValues(rest)
	if err != nil {
		return command.Usage(fmt.Sprintf("%s %s: %v (nothing was sent)\nRun %s %s --help for its arguments.", p, name, err, p, quoteArg(name)))
	}
	var unknown, missing []string
	for k := range vals {
		if !slices.ContainsFunc(info.Args, func(a PromptArg) bool { return a.Name == k }) {
			unknown = append(unknown, k)
		}
	}
	for _, a := range info.Args {
		if _, ok := vals[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	slices.Sort(unknown)
	var problems []string
	if len(unknown) > 0 {
		problems = append(problems, "unknown arguments: "+strings.Join(unknown, ", "))
	}
	if len(missing) > 0 {
		problems = append(problems, "missing required arguments: "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		return command.Usage(fmt.Sprintf("%s %s: %s (nothing was sent)\n\n%s", p, name, strings.Join(problems, "; "), promptHelp(*info)))
	}
	ctx, cancel := h.bound(ctx, server)
	defer cancel()
	res, reconnected, err := h.M.GetPrompt(ctx, server, name, vals)
	if err != nil {
		return h.callFailure(ctx, server, p, err)
	}
	f := formatter{server: server, save: h.saver()}
	head := fmt.Sprintf("Prompt %s of MCP server %q", name, server)
	if d := strings.TrimSpace(textutil.Sanitize(res.Description)); d != "" {
		head += ": " + d
	}
	f.parts = append(f.parts, head)
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		f.parts = append(f.parts, "["+textutil.Sanitize(string(m.Role))+"]")
		f.content(m.Content)
	}
	r := h.extraResult(server, f.text(), reconnected)
	r.Images = f.images
	return r
}

// promptHelp is `mcp:<server>:@prompt <name> --help`.
func promptHelp(p PromptInfo) string {
	var b strings.Builder
	desc := strings.TrimSpace(p.Description)
	if desc == "" {
		desc = "(the server gives no description)"
	}
	fmt.Fprintf(&b, "%s%s %s — %s\n\nUsage: %s", CommandPrefix(p.Server), PromptCmd, quoteArg(p.Name), desc, p.Command())
	if slices.ContainsFunc(p.Args, func(a PromptArg) bool { return !a.Required }) {
		b.WriteString(" [argument=value …]")
	}
	b.WriteString("\n")
	if len(p.Args) == 0 {
		b.WriteString("\nThis prompt takes no arguments.\n")
		return b.String()
	}
	b.WriteString("\nArguments (strings; name=value, --name=value or --name value):\n")
	for _, a := range p.Args {
		req := "optional"
		if a.Required {
			req = "required"
		}
		fmt.Fprintf(&b, "  %s (%s)", a.Name, req)
		if d := strings.Join(strings.Fields(a.Description), " "); d != "" {
			b.WriteString(" — " + d)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// bound applies the call timeout (the server entry's, else the handler's).
func (h *Handler) bound(ctx context.Context, server string) (context.Context, context.CancelFunc) {
	if t := h.timeout(server); t > 0 {
		return context.WithTimeout(ctx, t)
	}
	return ctx, func() {}
}

// extraSummary is what `mcp:<server>` says about the server's resources
// and prompts: how many, and the commands that reach them; "" when the
// server declares neither.
func (h *Handler) extraSummary(server string) string {
	rl, pl := h.M.CachedResources(server), h.M.CachedPrompts(server)
	p := CommandPrefix(server)
	var b strings.Builder
	if rl.Declared {
		fmt.Fprintf(&b, "Resources: %d, templates: %d — %s%s lists them, %s%s <uri> reads one.\n", len(rl.Resources), len(rl.Templates), p, ResourcesCmd, p, ReadCmd)
	}
	if pl.Declared {
		fmt.Fprintf(&b, "Prompts: %d — %s%s lists them, %s%s <name> argument=value … gets one.\n", len(pl.Prompts), p, PromptsCmd, p, PromptCmd)
	}
	return b.String()
}
