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
			case p.is("array") && p.Items != nil && p.Items.is("object") && len(p.Items.Properties) > 0:
				b.WriteString("      Each element is an object with these fields:\n")
				writeFields(&b, p.Items, "        ")
				fmt.Fprintf(&b, "      Pass a JSON array of such objects, or repeat --%s with one JSON object each.\n", k)
			case p.is("array"):
				b.WriteString("      Repeat the option for each element, or pass a JSON array.\n")
			case p.is("object") && len(p.Properties) > 0:
				b.WriteString("      A JSON object with these fields:\n")
				writeFields(&b, p, "        ")
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

// writeFields lists an object's fields: name, type, required, description;
// nested objects (and arrays of objects) one level deeper.
func writeFields(b *strings.Builder, s *Schema, indent string) {
	order := s.Order()
	width := 0
	for _, k := range order {
		width = max(width, len(k))
	}
	for _, k := range order {
		f := s.Properties[k]
		line := fmt.Sprintf("%s%-*s  %s", indent, width, k, f.TypeName())
		if s.IsRequired(k) {
			line += ", required"
		}
		if len(f.Enum) > 0 {
			vals := make([]string, len(f.Enum))
			for i, e := range f.Enum {
				vals[i] = jsonText(e)
			}
			line += ", one of: " + strings.Join(vals, ", ")
		}
		if d := strings.Join(strings.Fields(f.Description), " "); d != "" {
			line += " — " + d
		}
		b.WriteString(line + "\n")
		if len(indent) < 16 {
			switch {
			case f.is("object") && len(f.Properties) > 0:
				writeFields(b, f, indent+"  ")
			case f.is("array") && f.Items != nil && f.Items.is("object") && len(f.Items.Properties) > 0:
				writeFields(b, f.Items, indent+"  ")
			}
		}
	}
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

// sampleValue is an example value for one option, as written on the command
// line: plain text for strings and numbers, JSON for arrays and objects,
// built from the schema (required fields of objects, one element of arrays)
// so that BuildArgs accepts it.
func sampleValue(name string, p *Schema) string {
	v := sample(name, p, 0)
	if str, ok := v.(string); ok {
		return str
	}
	return jsonText(v)
}

func sample(name string, p *Schema, depth int) any {
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	if p.HasDefault && p.Default != nil {
		return p.Default
	}
	t := ""
	for _, x := range p.Types {
		if x != "null" {
			t = x
			break
		}
	}
	switch t {
	case "integer":
		return int64(1)
	case "number":
		return 1.5
	case "boolean":
		return true
	case "object":
		if len(p.Properties) == 0 || depth > 4 {
			return map[string]any{"key": "value"}
		}
		m := map[string]any{}
		for _, k := range p.Order() {
			if p.IsRequired(k) || len(p.Required) == 0 {
				m[k] = sample(k, p.Properties[k], depth+1)
			}
		}
		return m
	case "array":
		item := p.Items
		if item == nil {
			return []any{"a", "b"}
		}
		if depth > 4 {
			return []any{}
		}
		return []any{sample(singular(name), item, depth+1)}
	}
	return "example " + strings.ReplaceAll(camelWords(name), "_", " ")
}

// singular names an array's element for a sample: "edits" → "edit".
func singular(name string) string {
	if len(name) > 3 && strings.HasSuffix(name, "s") {
		return name[:len(name)-1]
	}
	return name
}

// camelWords spaces out camelCase: "oldText" → "old text".
func camelWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
