package textutil

import (
	"reflect"
	"testing"
)

func TestJSONKindAndValue(t *testing.T) {
	type obj struct{ A int }
	kinds := []struct {
		v    any
		want string
	}{
		{obj{}, "an object"}, {&obj{}, "an object"}, {map[string]int{}, "an object"}, {[]obj{}, "an array"},
		{"", "a string"}, {new(string), "a string"}, {true, "true or false"}, {1.5, "a number"}, {int64(1), "a number"},
	}
	for _, k := range kinds {
		if got := JSONKind(reflect.TypeOf(k.v)); got != k.want {
			t.Errorf("JSONKind(%T) = %q, want %q", k.v, got, k.want)
		}
	}
	if got := JSONKind(nil); got != "a value" {
		t.Errorf("JSONKind(nil) = %q", got)
	}
	for in, want := range map[string]string{"array": "an array", "object": "an object", "number": "a number", "string": "a string", "": "that value"} {
		if got := JSONValue(in); got != want {
			t.Errorf("JSONValue(%q) = %q, want %q", in, got, want)
		}
	}
}
