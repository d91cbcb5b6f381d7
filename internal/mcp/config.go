// Package mcp connects Synapse to Model Context Protocol servers through the
// official Go SDK and turns their tools into shell commands:
// `mcp:<server>:<tool> [--name=value | --name value | positional …]`, with
// arguments mapped onto the tool's JSON schema and -h/--help generated from it.
package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// Transport kinds.
const (
	KindStdio = "stdio"
	KindHTTP  = "http" // streamable HTTP
	KindSSE   = "sse"
)

// ServerConfig is one entry of "mcpServers". A stdio server has Command (and
// optional Args, Env, Cwd); a remote one has URL (and optional Headers).
type ServerConfig struct {
	Name    string            `json:"-"`
	Type    string            `json:"type,omitempty"` // "stdio", "http"/"streamable-http", "sse"; inferred when empty
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Sandbox holds per-server sandbox settings for stdio servers. The process
	// runs under the session's sandbox policy with the network cut off unless
	// "sandbox": {"network": true}.
	Sandbox  SandboxConfig `json:"sandbox,omitzero"`
	Disabled bool          `json:"disabled,omitempty"`
	// Timeout bounds one tool call in seconds (0: the command timeout).
	Timeout float64 `json:"timeout,omitempty"`

	File string `json:"-"` // the file the entry came from
	// Host serves a server of the embedding host's process (KindHost, the
	// Agent SDK's "type":"sdk"): nothing is started, messages go through it.
	Host HostLink `json:"-"`
}

// SandboxConfig is the "sandbox" object of a server entry.
type SandboxConfig struct {
	Network bool `json:"network"`
}

// Kind is the transport the server uses.
func (c ServerConfig) Kind() string {
	if c.Host != nil {
		return KindHost
	}
	switch strings.ToLower(c.Type) {
	case KindHost:
		return KindHost
	case "stdio":
		return KindStdio
	case "sse":
		return KindSSE
	case "http", "streamable-http", "streamable_http", "streamablehttp":
		return KindHTTP
	}
	if c.Command != "" {
		return KindStdio
	}
	if strings.HasSuffix(strings.TrimRight(c.URL, "/"), "/sse") {
		return KindSSE
	}
	return KindHTTP
}

// serverNameRE and envRef serve only configured MCP servers: compiled on
// first use, not at every start.
var serverNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })

// Validate checks an entry made elsewhere than in a config file (an ACP
// client's servers) as the files' entries are checked.
func (c ServerConfig) Validate() error { return c.validate() }

func (c ServerConfig) validate() error {
	if !serverNameRE().MatchString(c.Name) {
		return fmt.Errorf("invalid server name %q: use letters, digits, '.', '_' or '-' (it becomes mcp:<server>:<tool>)", c.Name)
	}
	switch t := strings.ToLower(c.Type); t {
	case "", "stdio", "sse", "http", "streamable-http", "streamable_http", "streamablehttp":
	default:
		return fmt.Errorf("server %q: unknown type %q: use stdio, http or sse", c.Name, c.Type)
	}
	switch {
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("server %q has both command and url: keep one", c.Name)
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("server %q needs either \"command\" (stdio) or \"url\" (HTTP)", c.Name)
	case c.Kind() == KindStdio && c.Command == "":
		return fmt.Errorf("server %q is type stdio but has no command", c.Name)
	case c.Kind() != KindStdio && c.URL == "":
		return fmt.Errorf("server %q is type %s but has no url", c.Name, c.Kind())
	}
	if c.URL != "" && !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
		return fmt.Errorf("server %q: url %q must start with http:// or https://", c.Name, c.URL)
	}
	return nil
}

// ConfigFiles are the files read, lowest precedence first: the user's
// $SYNAPSE_HOME/mcp/mcp_servers.json, then the working directory's .mcp.json
// (the format other agent CLIs write) and ./mcp_servers.json. A later file
// replaces a server of the same name.
func ConfigFiles(userFile, cwd string) []string {
	return []string{userFile, filepath.Join(cwd, ".mcp.json"), filepath.Join(cwd, "mcp_servers.json")}
}

// LoadConfig reads files (missing ones are skipped) and returns the servers
// by name plus one line per problem: a broken file or entry is reported and
// skipped, the rest still load. ${VAR} and ${VAR:-default} in command, args,
// env, cwd, url and headers are expanded from getenv.
func LoadConfig(files []string, getenv func(string) string) (map[string]ServerConfig, []string) {
	servers := map[string]ServerConfig{}
	var problems []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) || f == "" {
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("MCP config %s: %v (skipped)", f, err))
			continue
		}
		got, probs := parseConfig(f, data, getenv)
		problems = append(problems, probs...)
		for name, c := range got {
			servers[name] = c
		}
	}
	return servers, problems
}

// ProjectOptions say how far project MCP files are trusted.
type ProjectOptions struct {
	// Share names the variables a project file may expand (settings.json
	// "shareEnv"); every other ${VAR} expands to its default or nothing.
	Share []string
	// Approved reports whether the user approved this content of file
	// (Approvals.Approved for the project); nil approves nothing.
	Approved func(file string, content []byte) bool
}

// PendingFile is a project MCP file the user has not approved (in this
// content): its servers are not used until they do.
type PendingFile struct {
	File    string
	Content []byte
	Servers []ServerConfig // as written, ${VAR} not expanded
}

// Load reads the user's own file and then the project files (lowest
// precedence first, as ConfigFiles lists them). The user's file is trusted:
// it is theirs, and read-only to the agent's commands. A project file is
// not: it comes with whatever repository was cloned into the working
// directory, and the agent's own commands can write it, yet its servers are
// started (or contacted) by the host. So a project file is used only once
// the user approved its content (opts.Approved; the others are returned as
// pending), its ${VAR} expands only the names the user shares (opts.Share),
// and its "sandbox": {"network": true} is ignored. Each refusal is a
// problem line saying what to do instead.
func Load(userFile string, projectFiles []string, getenv func(string) string, opts ProjectOptions) (map[string]ServerConfig, []string, []PendingFile) {
	servers, problems := LoadConfig([]string{userFile}, getenv)
	refused := map[string]bool{}
	projectEnv := func(k string) string {
		if !slices.Contains(opts.Share, k) {
			refused[k] = true
			return ""
		}
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
	var pending []PendingFile
	proj := map[string]ServerConfig{}
	for _, f := range projectFiles {
		// Read once: what is approved is exactly what is parsed.
		data, err := readProjectFile(f)
		if errors.Is(err, os.ErrNotExist) || f == "" {
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("MCP config %s: %v (skipped)", f, err))
			continue
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		if opts.Approved == nil || !opts.Approved(f, data) {
			raw, probs := parseConfig(f, data, nil)
			problems = append(problems, probs...)
			if len(raw) > 0 {
				p := PendingFile{File: f, Content: data}
				for _, n := range sortedNames(raw) {
					p.Servers = append(p.Servers, raw[n])
				}
				pending = append(pending, p)
			}
			continue
		}
		got, probs := parseConfig(f, data, projectEnv)
		problems = append(problems, probs...)
		for name, c := range got {
			proj[name] = c
		}
	}
	for _, n := range sortedNames(proj) {
		c := proj[n]
		if c.Sandbox.Network {
			c.Sandbox.Network = false
			problems = append(problems, fmt.Sprintf(`MCP server %q in %s: "sandbox": {"network": true} is ignored in a project file (the agent's own commands can write it), so the server runs without the network; to give it the network, define it in %s`, n, c.File, userFile))
		}
		servers[n] = c
	}
	if len(refused) > 0 {
		var list []string
		for k := range refused {
			list = append(list, "${"+k+"}")
		}
		sort.Strings(list)
		problems = append(problems, fmt.Sprintf(`MCP config: %s left empty in the project's MCP files: a project file expands only the variables listed in settings.json "shareEnv" (e.g. "shareEnv": ["GITHUB_TOKEN"]); or define the server in %s`, strings.Join(list, ", "), userFile))
	}
	return servers, problems, pending
}

func sortedNames(m map[string]ServerConfig) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func parseConfig(file string, data []byte, getenv func(string) string) (map[string]ServerConfig, []string) {
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, []string{fmt.Sprintf("MCP config %s: invalid JSON: %s (file skipped; fix it or remove it)", file, jsonErr(data, err))}
	}
	if top.MCPServers == nil {
		return nil, []string{fmt.Sprintf(`MCP config %s: no "mcpServers" object (file skipped; expected {"mcpServers": {"<name>": {...}}})`, file)}
	}
	names := make([]string, 0, len(top.MCPServers))
	for n := range top.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]ServerConfig{}
	var problems []string
	for _, name := range names {
		var c ServerConfig
		dec := json.NewDecoder(bytes.NewReader(top.MCPServers[name]))
		if err := dec.Decode(&c); err != nil {
			problems = append(problems, fmt.Sprintf("MCP server %q in %s: %v (skipped)", name, file, err))
			continue
		}
		c.Name, c.File = name, file
		c.expand(getenv)
		if err := c.validate(); err != nil {
			problems = append(problems, fmt.Sprintf("MCP config %s: %v (skipped)", file, err))
			continue
		}
		if c.Disabled {
			continue
		}
		out[name] = c
	}
	return out, problems
}

// jsonErr adds a line number to a JSON syntax error.
func jsonErr(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, err)
	}
	return err.Error()
}

var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`) })

func expandEnv(s string, getenv func(string) string) string {
	if getenv == nil || !strings.Contains(s, "${") {
		return s
	}
	re := envRef()
	return re.ReplaceAllStringFunc(s, func(m string) string {
		sub := re.FindStringSubmatch(m)
		if v := getenv(sub[1]); v != "" {
			return v
		}
		return sub[3]
	})
}

func (c *ServerConfig) expand(getenv func(string) string) {
	c.Command = expandEnv(c.Command, getenv)
	c.Cwd = expandEnv(c.Cwd, getenv)
	c.URL = expandEnv(c.URL, getenv)
	for i, a := range c.Args {
		c.Args[i] = expandEnv(a, getenv)
	}
	for k, v := range c.Env {
		c.Env[k] = expandEnv(v, getenv)
	}
	for k, v := range c.Headers {
		c.Headers[k] = expandEnv(v, getenv)
	}
}

// maxProjectFile bounds what is read of a project's MCP file.
const maxProjectFile = 1 << 20

// readProjectFile reads a project MCP file, which the agent's commands can
// write: only a regular file is read, not through a symlink (its text would
// be shown to the user from elsewhere) and never blocking (a FIFO named
// .mcp.json hung every later start of Synapse in the project, past SIGTERM).
func readProjectFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("it is a symbolic link; a project's MCP file must be a regular file (copy the file there, or define the servers in your own mcp_servers.json)")
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file (%s)", st.Mode().Type())
	}
	if st.Size() > maxProjectFile {
		return nil, fmt.Errorf("it is larger than %d bytes", maxProjectFile)
	}
	return io.ReadAll(io.LimitReader(f, maxProjectFile))
}
