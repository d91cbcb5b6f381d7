package agentsh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/todo"
)

type todoInput struct {
	Todos *[]todoItemInput `json:"todos"`
}

type todoItemInput struct {
	Content    *string `json:"content"`
	ActiveForm *string `json:"activeForm"`
	Status     *string `json:"status"`
}

// todoWrite replaces the agent's todo list with a strictly validated one.
func (s *Shell) todoWrite(ctx context.Context, rest string) command.Result {
	raw, ok, err := contentArg(rest)
	if err != nil {
		return usageError("TodoWrite", err.Error())
	}
	if !ok || strings.TrimSpace(raw) == "" {
		return usageError("TodoWrite", "missing the JSON todo list")
	}
	items, err := parseTodos(raw, s.opts.TodoMaxItems, s.opts.TodoMaxContent)
	if err != nil {
		return failf("TodoWrite", err.Error())
	}
	if ctx.Err() != nil {
		return interrupted("TodoWrite")
	}
	s.opts.Todos.Set(items)
	return command.OK(renderTodos(items))
}

// parseTodos decodes and validates `{"todos":[...]}`: no unknown fields, every
// field present and non-empty, known statuses, at most one in_progress, at
// most maxItems items of at most maxContent characters.
func parseTodos(raw string, maxItems, maxContent int) ([]todo.Item, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var in todoInput
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("invalid JSON: %s; expected {\"todos\":[{\"content\":\"...\",\"activeForm\":\"...\",\"status\":\"pending\"}]}", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: unexpected text after the JSON object; send exactly one object")
	}
	if in.Todos == nil {
		return nil, errors.New(`missing "todos": expected {"todos":[...]}`)
	}
	list := *in.Todos
	if len(list) > maxItems {
		return nil, fmt.Errorf("Too many todo items: %d, the limit is %d (SYNAPSE_TODO_MAX_ITEMS); merge or drop items", len(list), maxItems)
	}
	items := make([]todo.Item, 0, len(list))
	inProgress := 0
	for i, it := range list {
		where := fmt.Sprintf("todos[%d]", i)
		for _, f := range []struct {
			name string
			v    *string
		}{{"content", it.Content}, {"activeForm", it.ActiveForm}, {"status", it.Status}} {
			if f.v == nil || strings.TrimSpace(*f.v) == "" {
				return nil, fmt.Errorf("%s.%s is missing or empty", where, f.name)
			}
			if f.name != "status" && utf8.RuneCountInString(*f.v) > maxContent {
				return nil, fmt.Errorf("%s.%s is %d characters, the limit is %d (SYNAPSE_TODO_MAX_CONTENT_LENGTH); shorten it", where, f.name, utf8.RuneCountInString(*f.v), maxContent)
			}
		}
		st := todo.Status(*it.Status)
		switch st {
		case todo.Pending, todo.Completed:
		case todo.InProgress:
			inProgress++
		default:
			return nil, fmt.Errorf("%s.status is %q; use pending, in_progress or completed", where, *it.Status)
		}
		items = append(items, todo.Item{Content: *it.Content, ActiveForm: *it.ActiveForm, Status: st})
	}
	if inProgress > 1 {
		return nil, fmt.Errorf("Too many in_progress items: %d items are in_progress; keep exactly one item in_progress at a time", inProgress)
	}
	return items, nil
}

func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("%v (at byte %d)", syn, syn.Offset)
	case errors.As(err, &typ):
		where := "the top level"
		if typ.Field != "" {
			where = fmt.Sprintf("%q", typ.Field)
		}
		return fmt.Sprintf("%s must be %s, not %s", where, textutil.JSONKind(typ.Type), textutil.JSONValue(typ.Value))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	}
	return err.Error()
}

// renderTodos shows the list as the model and the user see it.
func renderTodos(items []todo.Item) string {
	if len(items) == 0 {
		return "Todo list cleared\n"
	}
	var done, doing, pending int
	var b bytes.Buffer
	for _, it := range items {
		mark := "[ ]"
		switch it.Status {
		case todo.Completed:
			mark = "[x]"
			done++
		case todo.InProgress:
			mark = "[>]"
			doing++
		default:
			pending++
		}
		b.WriteString(mark + " " + it.Content + "\n")
	}
	head := fmt.Sprintf("Todos updated: %d completed, %d in progress, %d pending\n", done, doing, pending)
	return head + b.String()
}
