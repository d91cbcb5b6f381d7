// Package headlesstest checks the headless output contract for tests: of
// the golden streams in headless and of `synapse run`'s real output in cli.
package headlesstest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// CheckStream holds the format's contract on any output: every line is JSON
// with a type and a uuid, keys are snake_case (but for the few the Agent
// SDK spells in camelCase), the first event is system/init (for
// stream-json; control protocol lines aside), the last is the result, and
// every tool_use has exactly one tool_result.
func CheckStream(t testing.TB, out string) {
	t.Helper()
	uses, results := map[string]int{}, map[string]int{}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if typ := fmt.Sprint(ev["type"]); typ == "control_request" || typ == "control_response" {
			continue
		}
		types = append(types, fmt.Sprint(ev["type"]))
		if id, _ := ev["uuid"].(string); id == "" {
			t.Errorf("event without a uuid: %s", sc.Text())
		}
		checkSnake(t, ev, "")
		msg, _ := ev["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			b := b.(map[string]any)
			switch b["type"] {
			case "tool_use":
				uses[b["id"].(string)]++
			case "tool_result":
				results[b["tool_use_id"].(string)]++
			}
		}
	}
	if len(types) == 0 || types[len(types)-1] != "result" {
		t.Errorf("last event is not the result: %v", types)
	}
	if len(types) > 1 && types[0] != "system" {
		t.Errorf("first event is not system/init: %v", types)
	}
	for id, n := range uses {
		if n != 1 || results[id] != 1 {
			t.Errorf("tool_use %s: %d uses, %d results", id, n, results[id])
		}
	}
	for id := range results {
		if uses[id] == 0 {
			t.Errorf("tool_result %s without a tool_use", id)
		}
	}
}

// sdkCamel are the keys the Agent SDK's types spell in camelCase
// (system/init's permissionMode and apiKeySource, the result's modelUsage,
// whose entries are keyed by model and camelCase throughout).
var sdkCamel = map[string]bool{"permissionMode": true, "apiKeySource": true, "modelUsage": true}

// checkSnake fails on a camelCase key anywhere but inside tool inputs
// (the model's own arguments) and the SDK's own camelCase fields.
func checkSnake(t testing.TB, v any, key string) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if key == "input" || key == "tool_input" || key == "modelUsage" {
			return
		}
		for k, e := range x {
			if strings.ToLower(k) != k && !sdkCamel[k] {
				t.Errorf("key %q is not snake_case", k)
			}
			checkSnake(t, e, k)
		}
	case []any:
		for _, e := range x {
			checkSnake(t, e, key)
		}
	}
}
