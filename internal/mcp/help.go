package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/synapse-agent/synapse/internal/cmdline"
)

// ToolHelp is the -h/--help text of mcp:<server>:<tool>, generated from the
// tool's description and input schema: arguments with types, required,
// enums and defaults, the positional order, and an example.
func ToolHelp(server, tool, description string, s *Schema) string {
	cmd := "mcp:" + server + ":" + tool
	var b strings.Builder
	desc := strings.TrimSpace(description)
	if desc == "" {
		desc = "(the server gives no description)"
	}
	fmt.Fprintf(&b, "%s — %s\n\n", cmd, desc)

	order := s.Order()
	usage := cmd
	for _, k := range order {
		if s.IsRequired(k) {
			usage += fmt.Sprintf(" --%s=<%s>", k, s.Properties[k].TypeName())
		}
	}
	if len(order) > len(s.Required) {
		usage += " [options]"
	}
	fmt.Fprintf(&b, "Usage: %s\n", usage)

	if len(order) == 0 {
		b.WriteString("\nThis tool takes no arguments.\n")
	} else {
		b.WriteString("\nArguments:\n")
		for _, k := range order {
			p := s.Properties[k]
			fmt.Fprintf(&b, "  --%s <%s>", k, p.TypeName())
			var notes []string
			if s.IsRequired(k) {
				notes = append(notes, "required")
			}
			if p.HasDefault {
				notes = append(notes, "default: "+jsonText(p.Default))
			}
			if len(p.Enum) > 0 {
				vals := make([]string, len(p.Enum))
				for i, e := range p.Enum {
					vals[i] = jsonText(e)
				}
				notes = append(notes, "one of: "+strings.Join(vals, ", "))
			}
			if len(notes) > 0 {
				fmt.Fprintf(&b, "  (%s)", strings.Join(notes, "; "))
			}
			b.WriteString("\n")
			if d := strings.Join(strings.Fields(p.Description), " "); d != "" {
				fmt.Fprintf(&b, "      %s\n", d)
			}
			switch {
			case p.is("array"):
				b.WriteString("      Repeat the option for each element, or pass a JSON array.\n")
			case p.is("object"):
				b.WriteString("      Pass a JSON object.\n")
			case p.is("boolean") && len(p.Types) == 1:
				fmt.Fprintf(&b, "      --%s alone means true; --no-%s means false.\n", k, k)
			}
		}
		fmt.Fprintf(&b, "\nPositional arguments fill, in order: %s (those not given by name).\n", strings.Join(order, ", "))
		b.WriteString("Write options as --name=value or --name value; quote values with spaces or JSON.\n")
	}
	fmt.Fprintf(&b, "\nExample:\n  %s\n", example(cmd, s))
	return b.String()
}

func example(cmd string, s *Schema) string {
	order := s.Order()
	pick := []string{}
	for _, k := range order {
		if s.IsRequired(k) {
			pick = append(pick, k)
		}
	}
	if len(pick) == 0 && len(order) > 0 {
		pick = order[:1]
	}
	parts := []string{cmd}
	for _, k := range pick {
		p := s.Properties[k]
		if p.is("boolean") && len(p.Types) == 1 {
			parts = append(parts, "--"+k)
			continue
		}
		parts = append(parts, "--"+k+"="+cmdline.Quote(sampleValue(k, p)))
	}
	return strings.Join(parts, " ")
}

func sampleValue(name string, p *Schema) string {
	if len(p.Enum) > 0 {
		return fmt.Sprint(p.Enum[0])
	}
	if p.HasDefault && p.Default != nil {
		if str, ok := p.Default.(string); ok {
			return str
		}
		return jsonText(p.Default)
	}
	t := ""
	if len(p.Types) > 0 {
		t = p.Types[0]
	}
	switch t {
	case "integer":
		return "1"
	case "number":
		return "1.5"
	case "boolean":
		return "true"
	case "object":
		return `{"key":"value"}`
	case "array":
		if p.Items != nil && (p.Items.is("integer") || p.Items.is("number")) {
			return "[1,2]"
		}
		return `["a","b"]`
	}
	return "example " + strings.ReplaceAll(name, "_", " ")
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
