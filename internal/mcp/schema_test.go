package mcp

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
)

func typedSchema(t *testing.T) *Schema {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(mcptest.TypedSchema), &m); err != nil {
		t.Fatal(err)
	}
	return ParseSchema(m)
}

func TestBuildArgs(t *testing.T) {
	s := typedSchema(t)
	tests := []struct {
		name  string
		words []string
		want  string // JSON of the arguments
		errs  []string
	}{
		{"named forms", []string{"--name=Ann", "--count", "3", "--ratio=0.25", "--verbose", "--mode", "slow"},
			`{"count":3,"mode":"slow","name":"Ann","ratio":0.25,"verbose":true}`, nil},
		{"positional fill required in order", []string{"Bob", "2"}, `{"count":2,"name":"Bob"}`, nil},
		{"positional after named", []string{"--count=5", "Cy"}, `{"count":5,"name":"Cy"}`, nil},
		{"arrays repeat or JSON", []string{"a", "1", "--tags", "x", "--tags=y z", "--sizes=[1,2]", "--sizes", "3"},
			`{"count":1,"name":"a","sizes":[1,2,3],"tags":["x","y z"]}`, nil},
		{"object as JSON", []string{"a", "1", `--options={"k":[1,true]}`}, `{"count":1,"name":"a","options":{"k":[1,true]}}`, nil},
		{"boolean forms", []string{"a", "1", "--verbose", "false"}, `{"count":1,"name":"a","verbose":false}`, nil},
		{"no- prefix", []string{"a", "1", "--no-verbose"}, `{"count":1,"name":"a","verbose":false}`, nil},
		{"dash underscore and case", []string{"--NAME=a", "--Count=1"}, `{"count":1,"name":"a"}`, nil},
		{"nullable", []string{"a", "1", "--note", "null"}, `{"count":1,"name":"a","note":null}`, nil},
		{"nullable string", []string{"a", "1", "--note", "hi there"}, `{"count":1,"name":"a","note":"hi there"}`, nil},
		{"double dash", []string{"--", "--weird", "1"}, `{"count":1,"name":"--weird"}`, nil},
		{"negative number value", []string{"a", "--count", "-4"}, `{"count":-4,"name":"a"}`, nil},
		{"shell text verbatim", []string{"$(touch /tmp/pwned)", "1"}, `{"count":1,"name":"$(touch /tmp/pwned)"}`, nil},
		{"missing required", []string{"--ratio=1"}, "", []string{"missing required argument --name (string)", "missing required argument --count (integer)"}},
		{"type errors together", []string{"a", "--count=many", "--ratio=x", "--verbose=maybe", "--options=[1]"}, "",
			[]string{`--count: expected an integer, got "many"`, `--ratio: expected a number, got "x"`, `--verbose: expected true or false, got "maybe"`, "--options: expected a JSON object"}},
		{"enum", []string{"a", "1", "--mode=medium"}, "", []string{`--mode: "medium" is not allowed; use one of: fast, slow`}},
		{"array element type", []string{"a", "1", `--sizes=[1,"x"]`}, "", []string{`--sizes: element 1: expected integer, got "x"`}},
		{"bad JSON array", []string{"a", "1", "--tags=[x"}, "", []string{"--tags: \"[x\" is not a valid JSON array"}},
		{"unknown option", []string{"a", "1", "--colour", "red"}, "", []string{"unknown argument --colour (valid: --name, --count, --mode, --note, --options, --ratio, --sizes, --tags, --verbose)"}},
		{"too many positionals", []string{"a", "1", "fast", "n", "{}", "0.5", "[1]", "[]", "true", "extra"}, "", []string{"too many positional arguments: extra"}},
		{"value missing", []string{"a", "1", "--ratio"}, "", []string{"--ratio needs a value (number)"}},
		{"given twice", []string{"--name=a", "--name=b", "--count=1"}, "", []string{"--name is given more than once"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildArgs(s, tt.words)
			if tt.errs != nil {
				if err == nil {
					t.Fatalf("no error; got %v", got)
				}
				for _, e := range tt.errs {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error lacks %q:\n%v", e, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}

// Each bad argument is one error: a mistyped required value is not also
// reported missing, and nested problems name the field's path.
func TestBuildArgsOneErrorPerArgument(t *testing.T) {
	typed := ParseSchema(json.RawMessage(mcptest.TypedSchema))
	patch := ParseSchema(json.RawMessage(mcptest.PatchSchema))
	tests := []struct {
		name  string
		s     *Schema
		words []string
		want  string
	}{
		{"mistyped required", typed, []string{"--name=a", "--count=many"}, `--count: expected an integer, got "many"`},
		{"mistyped positional", typed, []string{"a", "many"}, `--count: expected an integer, got "many"`},
		{"element field missing", patch, []string{"--path=a", `--edits=[{"oldText":"x"}]`}, `--edits: element 0: missing field "newText" (string, required); the fields are: oldText (string, required), newText (string, required), count (integer)`},
		{"element field mistyped", patch, []string{"--path=a", `--edits=[{"oldText":"x","newText":"y","count":"two"}]`}, `--edits: element 0: field "count": expected integer, got "two"`},
		{"element not an object", patch, []string{"--path=a", `--edits=["x"]`}, `--edits: element 0: expected object, got "x"`},
		{"repeated element checked", patch, []string{"--path=a", `--edits={"newText":"y"}`}, `--edits: missing field "oldText" (string, required); the fields are: oldText (string, required), newText (string, required), count (integer)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildArgs(tt.s, tt.words)
			var ae *ArgError
			if !errors.As(err, &ae) || len(ae.Problems) != 1 || ae.Problems[0] != tt.want {
				t.Errorf("error = %v\nwant exactly one problem: %s", err, tt.want)
			}
		})
	}
}

func TestSchemaLenient(t *testing.T) {
	tests := []struct {
		in    any
		order []string
	}{
		{nil, nil},
		{map[string]any{"type": 7, "properties": "nope", "required": "x"}, nil},
		{map[string]any{"properties": map[string]any{"b": nil, "a": map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "null"}}}}, "required": []any{"b", 3}}, []string{"b", "a"}},
		{json.RawMessage(`{"type":"object","properties":{"z":{"type":"string"}}}`), []string{"z"}},
	}
	for _, tt := range tests {
		s := ParseSchema(tt.in)
		if got := s.Order(); !reflect.DeepEqual(got, tt.order) {
			t.Errorf("Order() = %v, want %v", got, tt.order)
		}
	}
	s := ParseSchema(map[string]any{"properties": map[string]any{"a": map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "null"}}}}})
	if got, err := BuildArgs(s, []string{"--a=3"}); err != nil || got["a"] != int64(3) {
		t.Errorf("anyOf integer: %v %v", got, err)
	}
	free := ParseSchema(map[string]any{"type": "object"})
	if got, err := BuildArgs(free, []string{"--x=1", `--y={"a":1}`}); err != nil || got["x"] != "1" || !reflect.DeepEqual(got["y"], map[string]any{"a": float64(1)}) {
		t.Errorf("schema without properties: %v %v", got, err)
	}
}
