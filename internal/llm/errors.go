package llm

import (
	"fmt"
	"time"
)

// ErrorKind classifies provider failures so callers can act on them.
type ErrorKind string

// Error kinds.
const (
	ErrAuth       ErrorKind = "auth"        // bad or missing key (401/403)
	ErrRateLimit  ErrorKind = "rate_limit"  // 429 after retries
	ErrOverloaded ErrorKind = "overloaded"  // 529/503 after retries
	ErrConnection ErrorKind = "connection"  // network failure, half-closed stream
	ErrStatus     ErrorKind = "status"      // any other HTTP status
	ErrBadRequest ErrorKind = "bad_request" // 400: the request itself was refused
	ErrTruncated  ErrorKind = "truncated"   // max_tokens hit in the middle of a tool call
	ErrProtocol   ErrorKind = "protocol"    // the server sent something that is not the wire format
	ErrStalled    ErrorKind = "stalled"     // the server sent nothing for the idle timeout
)

// Error is a typed provider error with a message a user can act on.
type Error struct {
	Kind       ErrorKind
	Provider   string
	StatusCode int
	RetryAfter time.Duration
	Message    string // what went wrong (and, when Hint is empty, what to do)
	// Hint says what the user can do about it; Error() ends with it. A
	// retry notice leaves it out: "try again later" while retrying misleads.
	Hint string
	Err  error
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Reason()
	}
	s := e.Provider + ": " + e.Message + "; " + e.Hint
	if e.StatusCode != 0 {
		s = fmt.Sprintf("%s (HTTP %d)", s, e.StatusCode)
	}
	return s
}

// Reason is the error without its hint: what went wrong, for a notice
// that already says what happens next.
func (e *Error) Reason() string {
	s := e.Provider + ": " + e.Message
	if e.StatusCode != 0 {
		s = fmt.Sprintf("%s (HTTP %d)", s, e.StatusCode)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
