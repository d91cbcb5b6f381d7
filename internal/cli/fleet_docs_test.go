package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
	"mvdan.cc/sh/v3/syntax"

	"github.com/synapse-agent/synapse/internal/tool"
)

// The fleet examples (docs/fleet.md, docs/fleet/*) are copied into clusters
// and CI as they are, so they must not rot: every synapse command line in
// them must name a real subcommand and only flags it has, with values it
// takes, and the Job must keep the promises docs/fleet.md makes about it.

const fleetDir = "../../docs/fleet"

// synapseCall is one synapse command line found in a document.
type synapseCall struct {
	where string
	args  []string // after "synapse"; a word that is not a plain literal is "ARG"
}

func TestFleetDocsUseRealCommandsAndFlags(t *testing.T) {
	var calls []synapseCall
	for _, name := range []string{"job.yaml", "github-actions.yml"} {
		calls = append(calls, yamlCalls(t, filepath.Join(fleetDir, name))...)
	}
	calls = append(calls, markdownCalls(t, filepath.Join(fleetDir, "..", "fleet.md"))...)

	seen := map[string]bool{}
	for _, c := range calls {
		path := checkCall(t, c)
		seen[c.where[:strings.Index(c.where, ":")]+" "+path] = true
	}
	// The extraction must keep finding the examples' commands, or this
	// test would pass on nothing.
	for _, want := range []string{
		"job.yaml synapse run",
		"github-actions.yml synapse run",
		"github-actions.yml synapse sandbox status",
		"fleet.md synapse sandbox status",
		"fleet.md synapse sandbox exec",
		"fleet.md synapse run",
	} {
		if !seen[want] {
			t.Errorf("no %q command line found (found: %v)", want, keys(seen))
		}
	}
}

// checkCall parses c's flags with the real command tree and returns the
// command path it reached.
func checkCall(t *testing.T, c synapseCall) string {
	t.Helper()
	path, problems := callProblems(c)
	for _, p := range problems {
		t.Error(p)
	}
	return path
}

// callProblems parses c's flags with the real command tree and returns the
// command path it reached and what is wrong with the call.
func callProblems(c synapseCall) (string, []string) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	line := strings.Join(c.args, " ")
	stdio := IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	root := newRootCmd(stdio)
	cmd, rest, err := root.Find(c.args)
	if err != nil {
		bad("%s: synapse %s: %v", c.where, line, err)
		return "", problems
	}
	if cmd == root && len(c.args) > 0 && !strings.HasPrefix(c.args[0], "-") {
		bad("%s: synapse %s: no such command %q", c.where, line, c.args[0])
		return "", problems
	}
	// pflag stops at "--": what follows is the command sandbox exec runs.
	if err := cmd.ParseFlags(rest); err != nil {
		bad("%s: synapse %s: %v", c.where, line, err)
		return cmd.CommandPath(), problems
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		bad("%s: synapse %s: %v", c.where, line, err)
		return cmd.CommandPath(), problems
	}
	if f := cmd.Flags().Lookup("output-format"); f != nil && f.Changed {
		if v := f.Value.String(); v != formatText && v != formatJSON && v != formatStreamJSON {
			bad("%s: --output-format %q is not one synapse run takes", c.where, v)
		}
	}
	if f := cmd.Flags().Lookup("permission-mode"); f != nil && f.Changed && f.Value.String() != "ARG" {
		if _, err := tool.ParseMode(f.Value.String()); err != nil {
			bad("%s: %v", c.where, err)
		}
	}
	if cmd.Name() == "exec" && cmd.Parent() != nil && cmd.Parent().Name() == "sandbox" && !slices.Contains(c.args, "--") {
		bad("%s: synapse sandbox exec without -- before the command", c.where)
	}
	return cmd.CommandPath(), problems
}

// yamlCalls finds the synapse command lines in a YAML file: shell scripts in
// any string, argv lists starting with "synapse", and the args of a container
// whose image's entrypoint is synapse (no command of its own).
func yamlCalls(t *testing.T, path string) []synapseCall {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var calls []synapseCall
	base := filepath.Base(path)
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			where := base + ":" + strconv.Itoa(n.Line)
			switch n.Kind {
			case yaml.ScalarNode:
				calls = append(calls, shellCalls(where, n.Value)...)
			case yaml.SequenceNode:
				if argv, ok := scalars(n); ok && len(argv) > 0 && argv[0] == "synapse" {
					calls = append(calls, synapseCall{where, argv[1:]})
				}
			case yaml.MappingNode:
				if image, args := mapValue(n, "image"), mapValue(n, "args"); image != nil && args != nil && mapValue(n, "command") == nil {
					if argv, ok := scalars(args); ok {
						calls = append(calls, synapseCall{where, argv})
					}
				}
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(&doc)
	}
	return calls
}

var fence = regexp.MustCompile("(?ms)^```(?:sh|bash|shell|console)\\n(.*?)^```")

// markdownCalls finds the synapse command lines in a page's shell code blocks.
func markdownCalls(t *testing.T, path string) []synapseCall {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var calls []synapseCall
	for _, m := range fence.FindAllSubmatchIndex(data, -1) {
		line := 1 + bytes.Count(data[:m[2]], []byte("\n"))
		calls = append(calls, shellCalls(filepath.Base(path)+":"+strconv.Itoa(line), string(data[m[2]:m[3]]))...)
	}
	return calls
}

// shellCalls parses src as a shell script (text that is not one is no
// command line) and returns its calls of synapse.
func shellCalls(where, src string) []synapseCall {
	if !strings.Contains(src, "synapse") {
		return nil
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return nil
	}
	var calls []synapseCall
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		words := make([]string, len(ce.Args))
		for i, w := range ce.Args {
			words[i] = literal(w)
		}
		// synapse …, exec synapse …, and podman/docker run … synapse … (the
		// image named synapse, whose entrypoint is synapse).
		i := slices.Index(words, "synapse")
		engine := len(words) > 1 && (words[0] == "podman" || words[0] == "docker") && words[1] == "run"
		// A bare "synapse" (a YAML name: or path:) is no command line.
		if i >= 0 && i+1 < len(words) && (i == 0 || words[0] == "exec" || engine) {
			calls = append(calls, synapseCall{where, words[i+1:]})
		}
		return true
	})
	return calls
}

// literal is the word's value when quoting alone makes it, else "ARG".
func literal(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if len(p.Parts) != 1 {
				return "ARG"
			}
			l, ok := p.Parts[0].(*syntax.Lit)
			if !ok {
				return "ARG"
			}
			b.WriteString(l.Value)
		default:
			return "ARG"
		}
	}
	return b.String()
}

func scalars(n *yaml.Node) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		return nil, false
	}
	var out []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return nil, false
		}
		out = append(out, c.Value)
	}
	return out, true
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestFleetJobKeepsItsPromises checks the Job example does what docs/fleet.md
// says: one task per completion index from the ConfigMap, the key from a
// Secret, non-root, no privilege, no unconfined seccomp.
func TestFleetJobKeepsItsPromises(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fleetDir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type envVar struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	type container struct {
		Name            string         `yaml:"name"`
		Image           string         `yaml:"image"`
		Command         []string       `yaml:"command"`
		Args            []string       `yaml:"args"`
		Env             []envVar       `yaml:"env"`
		SecurityContext map[string]any `yaml:"securityContext"`
	}
	var configMap struct {
		Kind string            `yaml:"kind"`
		Data map[string]string `yaml:"data"`
	}
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Template       struct {
				Spec struct {
					SecurityContext struct {
						RunAsNonRoot   bool           `yaml:"runAsNonRoot"`
						RunAsUser      int            `yaml:"runAsUser"`
						SeccompProfile map[string]any `yaml:"seccompProfile"`
					} `yaml:"securityContext"`
					InitContainers []container `yaml:"initContainers"`
					Containers     []container `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&configMap); err != nil || configMap.Kind != "ConfigMap" {
		t.Fatalf("first document: want the tasks ConfigMap (kind %q, %v)", configMap.Kind, err)
	}
	if err := dec.Decode(&job); err != nil || job.Kind != "Job" {
		t.Fatalf("second document: want the Job (kind %q, %v)", job.Kind, err)
	}
	if job.Spec.CompletionMode != "Indexed" {
		t.Errorf("completionMode %q, want Indexed", job.Spec.CompletionMode)
	}
	if job.Spec.Completions != len(configMap.Data) {
		t.Errorf("completions %d, but the ConfigMap holds %d tasks", job.Spec.Completions, len(configMap.Data))
	}
	for i := range job.Spec.Completions {
		if configMap.Data[strconv.Itoa(i)] == "" {
			t.Errorf("no task for completion index %d (ConfigMap key %q)", i, strconv.Itoa(i))
		}
	}
	ps := job.Spec.Template.Spec
	if !ps.SecurityContext.RunAsNonRoot || ps.SecurityContext.RunAsUser == 0 {
		t.Errorf("the pod must run as non-root: %+v", ps.SecurityContext)
	}
	if got := ps.SecurityContext.SeccompProfile["type"]; got != "RuntimeDefault" {
		t.Errorf("seccompProfile type %v, want RuntimeDefault", got)
	}
	if strings.Contains(strings.ToLower(string(data)), "unconfined") || regexp.MustCompile(`privileged:\s*true`).Match(data) {
		t.Error("the example must need neither an unconfined seccomp profile nor privileged mode")
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(ps.Containers))
	}
	c := ps.Containers[0]
	script := strings.Join(append(c.Command, c.Args...), " ")
	if !strings.Contains(script, "$JOB_COMPLETION_INDEX") || !strings.Contains(script, "--output-format json") {
		t.Errorf("the container must run the task of its completion index with --output-format json: %q", script)
	}
	var key bool
	for _, e := range c.Env {
		if e.Name == "ANTHROPIC_API_KEY" {
			key = e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != ""
		}
	}
	if !key {
		t.Error("ANTHROPIC_API_KEY must come from a Secret (valueFrom.secretKeyRef)")
	}
	for _, c := range append(ps.InitContainers, ps.Containers...) {
		if c.SecurityContext["allowPrivilegeEscalation"] != false {
			t.Errorf("container %s: allowPrivilegeEscalation must be false", c.Name)
		}
	}
}

// TestFleetContainerfile checks the image runs synapse as a non-root user.
func TestFleetContainerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fleetDir, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{`ENTRYPOINT ["synapse"]`, `-trimpath`, `-ldflags "-s -w`, "./cmd/synapse"} {
		if !strings.Contains(s, want) {
			t.Errorf("Containerfile lacks %s", want)
		}
	}
	users := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindAllStringSubmatch(s, -1)
	if len(users) == 0 || strings.HasPrefix(users[len(users)-1][1], "0") || strings.HasPrefix(users[len(users)-1][1], "root") {
		t.Errorf("the image must end as a non-root USER, got %v", users)
	}
	if _, err := os.Stat("../../cmd/synapse"); err != nil {
		t.Error(err)
	}
}
