package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Schema is the part of a tool's JSON schema that argument mapping and help
// need. It is read leniently: anything unexpected is ignored, never a panic.
type Schema struct {
	Types       []string // "string", "integer", "number", "boolean", "array", "object", "null"
	Description string
	Enum        []any
	Default     any
	HasDefault  bool
	Items       *Schema
	Properties  map[string]*Schema
	Required    []string
	// Additional reports whether properties outside Properties are accepted.
	Additional bool
}

// ParseSchema reads a JSON schema given as any JSON-marshalable value (the
// SDK hands the client a map[string]any).
func ParseSchema(v any) *Schema {
	var m map[string]any
	switch x := v.(type) {
	case map[string]any:
		m = x
	case nil:
	default:
		b, err := json.Marshal(x)
		if err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	return schemaFrom(m, 0)
}

func schemaFrom(m map[string]any, depth int) *Schema {
	s := &Schema{}
	if m == nil || depth > 16 {
		return s
	}
	switch t := m["type"].(type) {
	case string:
		s.Types = []string{t}
	case []any:
		for _, e := range t {
			if str, ok := e.(string); ok {
				s.Types = append(s.Types, str)
			}
		}
	}
	if len(s.Types) == 0 { // anyOf/oneOf of simple types: collect them
		for _, key := range []string{"anyOf", "oneOf"} {
			alts, _ := m[key].([]any)
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok {
					sub := schemaFrom(am, depth+1)
					s.Types = appendNew(s.Types, sub.Types...)
					if s.Items == nil {
						s.Items = sub.Items
					}
					if s.Enum == nil {
						s.Enum = sub.Enum
					}
				}
			}
		}
	}
	s.Description, _ = m["description"].(string)
	if s.Description == "" {
		s.Description, _ = m["title"].(string)
	}
	if e, ok := m["enum"].([]any); ok {
		s.Enum = e
	} else if c, ok := m["const"]; ok {
		s.Enum = []any{c}
	}
	if d, ok := m["default"]; ok {
		s.Default, s.HasDefault = d, true
	}
	if it, ok := m["items"].(map[string]any); ok {
		s.Items = schemaFrom(it, depth+1)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		s.Properties = map[string]*Schema{}
		for k, p := range props {
			pm, _ := p.(map[string]any)
			s.Properties[k] = schemaFrom(pm, depth+1)
		}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if str, ok := r.(string); ok && !contains(s.Required, str) {
				s.Required = append(s.Required, str)
			}
		}
	}
	switch a := m["additionalProperties"].(type) {
	case bool:
		s.Additional = a
	case map[string]any:
		s.Additional = true
	default:
		// JSON schema allows extra properties by default; a tool with no declared
		// properties at all takes whatever is given.
		s.Additional = len(s.Properties) == 0
	}
	return s
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TypeName is the type as shown in help: "string", "array of integer", "string|null".
func (s *Schema) TypeName() string {
	if len(s.Types) == 0 {
		if len(s.Enum) > 0 {
			return "enum"
		}
		return "any"
	}
	parts := make([]string, len(s.Types))
	for i, t := range s.Types {
		if t == "array" && s.Items != nil && len(s.Items.Types) > 0 {
			t = "array of " + s.Items.TypeName()
		}
		parts[i] = t
	}
	return strings.Join(parts, "|")
}

func (s *Schema) is(t string) bool { return contains(s.Types, t) }

// IsRequired reports whether name is a required property.
func (s *Schema) IsRequired(name string) bool { return contains(s.Required, name) }

// Order is the order of properties for help and positional arguments: the
// required ones in the schema's order, then the others alphabetically (the SDK
// gives the client the schema as a map, so declaration order is lost).
func (s *Schema) Order() []string {
	var out []string
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok {
			out = append(out, r)
		}
	}
	var rest []string
	for k := range s.Properties {
		if !s.IsRequired(k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// lookup finds the property an option names: exactly, then with - and _
// swapped, then case-insensitively.
func (s *Schema) lookup(name string) (string, *Schema) {
	if p, ok := s.Properties[name]; ok {
		return name, p
	}
	for _, alt := range []string{strings.ReplaceAll(name, "-", "_"), strings.ReplaceAll(name, "_", "-")} {
		if p, ok := s.Properties[alt]; ok {
			return alt, p
		}
	}
	norm := func(x string) string { return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(x)) }
	for k, p := range s.Properties {
		if norm(k) == norm(name) {
			return k, p
		}
	}
	return "", nil
}

// ArgError lists everything wrong with the arguments, found before the call.
type ArgError struct{ Problems []string }

func (e *ArgError) Error() string { return strings.Join(e.Problems, "\n") }

// BuildArgs maps command-line words onto the schema: --name=value, --name
// value, --flag / --no-flag for booleans, repeated options or a JSON array
// for arrays, JSON for objects, and positional words filling the properties
// not given by name in Order. Type errors and missing required arguments are
// all reported together.
func BuildArgs(s *Schema, words []string) (map[string]any, error) {
	out := map[string]any{}
	var problems []string
	var positional []string
	fail := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
	// bad holds the arguments already reported: a mistyped value is one
	// error, not also a "missing required argument".
	bad := map[string]bool{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			positional = append(positional, words[i+1:]...)
			break
		}
		if !strings.HasPrefix(w, "--") || len(w) == 2 {
			positional = append(positional, w)
			continue
		}
		name, val, hasVal := strings.Cut(w[2:], "=")
		key, prop := s.lookup(name)
		if prop == nil && strings.HasPrefix(name, "no-") && !hasVal {
			if k, p := s.lookup(name[3:]); p != nil && p.is("boolean") {
				out[k] = false
				continue
			}
		}
		if prop == nil {
			if !s.Additional {
				fail("unknown argument --%s (valid: %s)", name, optionList(s))
				if !hasVal && i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
					i++
				}
				continue
			}
			key, prop = name, &Schema{}
		}
		if !hasVal {
			switch {
			case prop.is("boolean") && len(prop.Types) == 1:
				val = "true"
				if i+1 < len(words) && isBoolWord(words[i+1]) {
					val = words[i+1]
					i++
				}
			case i+1 < len(words):
				val = words[i+1]
				i++
			default:
				fail("--%s needs a value (%s)", key, prop.TypeName())
				continue
			}
		}
		if err := assign(out, key, prop, val); err != nil {
			fail("%v", err)
			bad[key] = true
		}
	}
	if len(positional) > 0 {
		var free []string
		for _, k := range s.Order() {
			if _, set := out[k]; !set && !bad[k] {
				free = append(free, k)
			}
		}
		for i, w := range positional {
			if i >= len(free) {
				fail("too many positional arguments: %s (every argument already has a value)", strings.Join(positional[i:], " "))
				break
			}
			if err := assign(out, free[i], s.Properties[free[i]], w); err != nil {
				fail("%v", err)
				bad[free[i]] = true
			}
		}
	}
	for _, r := range s.Required {
		if _, ok := out[r]; !ok && !bad[r] {
			t := "value"
			if p := s.Properties[r]; p != nil {
				t = p.TypeName()
			}
			fail("missing required argument --%s (%s)", r, t)
		}
	}
	if len(problems) > 0 {
		return nil, &ArgError{Problems: problems}
	}
	return out, nil
}

func optionList(s *Schema) string {
	order := s.Order()
	if len(order) == 0 {
		return "none; this tool takes no arguments"
	}
	opts := make([]string, len(order))
	for i, k := range order {
		opts[i] = "--" + k
	}
	return strings.Join(opts, ", ")
}

func isBoolWord(w string) bool {
	_, err := parseBool(w)
	return err == nil
}

func parseBool(w string) (bool, error) {
	switch strings.ToLower(w) {
	case "true", "yes", "y", "1", "on":
		return true, nil
	case "false", "no", "n", "0", "off":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

func assign(out map[string]any, key string, prop *Schema, raw string) error {
	if prop.is("array") && !(raw == "null" && prop.is("null")) {
		var items []any
		if strings.HasPrefix(strings.TrimSpace(raw), "[") {
			if err := json.Unmarshal([]byte(raw), &items); err != nil {
				return fmt.Errorf("--%s: %q is not a valid JSON array: %v", key, raw, err)
			}
			for i, it := range items {
				if err := checkJSONValue(prop.Items, it); err != nil {
					return fmt.Errorf("--%s: element %d: %v", key, i, err)
				}
			}
		} else {
			item := &Schema{}
			if prop.Items != nil {
				item = prop.Items
			}
			v, err := convert(item, raw)
			if err == nil {
				err = checkJSONValue(item, v)
			}
			if err != nil {
				return fmt.Errorf("--%s: %v", key, err)
			}
			items = []any{v}
		}
		prev, _ := out[key].([]any)
		if prev == nil {
			prev = []any{} // `--tags=[]` sends an empty array, not null
		}
		out[key] = append(prev, items...)
		return nil
	}
	if _, dup := out[key]; dup {
		return fmt.Errorf("--%s is given more than once", key)
	}
	v, err := convert(prop, raw)
	if err == nil {
		err = checkJSONValue(prop, v)
	}
	if err != nil {
		return fmt.Errorf("--%s: %v", key, err)
	}
	out[key] = v
	return nil
}

// convert turns one word into a value of the property's type(s).
func convert(p *Schema, raw string) (any, error) {
	v, err := convertType(p, raw)
	if err != nil {
		return nil, err
	}
	if len(p.Enum) > 0 && !inEnum(p.Enum, v) {
		return nil, fmt.Errorf("%q is not allowed; use one of: %s", raw, enumList(p.Enum))
	}
	return v, nil
}

func convertType(p *Schema, raw string) (any, error) {
	types := p.Types
	if len(types) == 0 {
		if len(p.Enum) > 0 { // untyped enum: match the enum's own values
			for _, e := range p.Enum {
				if fmt.Sprint(e) == raw {
					return e, nil
				}
			}
		}
		t := strings.TrimSpace(raw)
		if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			var v any
			if json.Unmarshal([]byte(t), &v) == nil {
				return v, nil
			}
		}
		return raw, nil
	}
	if raw == "null" && p.is("null") {
		return nil, nil
	}
	var firstErr error
	for _, t := range types {
		v, err := convertOne(t, raw)
		if err == nil {
			return v, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if len(types) > 1 {
		return nil, fmt.Errorf("expected %s, got %q", strings.Join(types, " or "), raw)
	}
	return nil, firstErr
}

func convertOne(t, raw string) (any, error) {
	switch t {
	case "string":
		return raw, nil
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			if f, ferr := strconv.ParseFloat(strings.TrimSpace(raw), 64); ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return int64(f), nil
			}
			return nil, fmt.Errorf("expected an integer, got %q", raw)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("expected a number, got %q", raw)
		}
		return f, nil
	case "boolean":
		b, err := parseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("expected true or false, got %q", raw)
		}
		return b, nil
	case "object":
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
			return nil, fmt.Errorf(`expected a JSON object such as '{"key":"value"}', got %q`, raw)
		}
		return m, nil
	case "null":
		if raw == "null" {
			return nil, nil
		}
		return nil, fmt.Errorf("expected null, got %q", raw)
	case "array":
		var a []any
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			return nil, fmt.Errorf("expected a JSON array, got %q", raw)
		}
		return a, nil
	}
	return raw, nil // a type we do not know: pass the text through
}

// checkJSONValue checks a value given as JSON (an array element, an object)
// against its schema, down into object fields and array elements, and names
// the first problem with its path. Values converted from plain words (an
// int64, a string) pass when their type is listed.
func checkJSONValue(p *Schema, v any) error {
	return checkValue(p, v, 0)
}

func checkValue(p *Schema, v any, depth int) error {
	if p == nil || depth > 16 {
		return nil
	}
	if len(p.Types) > 0 && !typeMatches(p.Types, v) {
		b, _ := json.Marshal(v)
		return fmt.Errorf("expected %s, got %s", p.TypeName(), b)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range p.Required {
			if _, ok := x[r]; !ok {
				t := "value"
				if f := p.Properties[r]; f != nil {
					t = f.TypeName()
				}
				return fmt.Errorf("missing field %q (%s, required)%s", r, t, fieldsHint(p))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := p.Properties[k]
			if !ok {
				if !p.Additional && len(p.Properties) > 0 {
					return fmt.Errorf("unknown field %q%s", k, fieldsHint(p))
				}
				continue
			}
			if err := checkValue(f, x[k], depth+1); err != nil {
				return fmt.Errorf("field %q: %v", k, err)
			}
		}
	case []any:
		for i, e := range x {
			if err := checkValue(p.Items, e, depth+1); err != nil {
				return fmt.Errorf("element %d: %v", i, err)
			}
		}
	}
	if len(p.Enum) > 0 && !inEnum(p.Enum, v) {
		b, _ := json.Marshal(v)
		return fmt.Errorf("%s is not allowed; use one of: %s", b, enumList(p.Enum))
	}
	return nil
}

func typeMatches(types []string, v any) bool {
	for _, t := range types {
		switch x := v.(type) {
		case string:
			if t == "string" {
				return true
			}
		case float64:
			if t == "number" || (t == "integer" && x == math.Trunc(x)) {
				return true
			}
		case int64:
			if t == "integer" || t == "number" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case nil:
			if t == "null" {
				return true
			}
		}
	}
	return false
}

// fieldsHint lists an object's fields for an error message.
func fieldsHint(p *Schema) string {
	if len(p.Properties) == 0 {
		return ""
	}
	var fs []string
	for _, k := range p.Order() {
		f := k + " (" + p.Properties[k].TypeName()
		if p.IsRequired(k) {
			f += ", required"
		}
		fs = append(fs, f+")")
	}
	return "; the fields are: " + strings.Join(fs, ", ")
}

func inEnum(enum []any, v any) bool {
	vb, _ := json.Marshal(v)
	for _, e := range enum {
		eb, _ := json.Marshal(e)
		if string(eb) == string(vb) {
			return true
		}
		if f, ok := e.(float64); ok { // 3 (int64) against 3.0 (float64)
			if n, ok := v.(int64); ok && float64(n) == f {
				return true
			}
		}
	}
	return false
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, ", ")
}
