package textutil

import (
	"reflect"
	"strings"
)

// JSONKind names the JSON value that decodes into t ("an object", "an
// array", …): messages about a JSON input never name a Go type.
func JSONKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Interface:
		return "a value"
	}
	return "a number"
}

// JSONValue is a JSON value kind as json.UnmarshalTypeError.Value names it
// ("array", "number", …) with its article ("an array").
func JSONValue(kind string) string {
	if kind == "" {
		return "that value"
	}
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
