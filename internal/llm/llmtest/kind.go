package llmtest

import (
	"errors"

	"github.com/synapse-agent/synapse/internal/llm"
)

// KindOf returns the kind of a provider error, or "" when err is not one.
func KindOf(err error) llm.ErrorKind {
	var e *llm.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}
