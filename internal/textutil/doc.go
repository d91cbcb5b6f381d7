// Package textutil holds small text helpers shared by every layer. It is a
// leaf: it imports nothing of ours, so any package may use it.
//
// Sanitize is the one output cleaner for text from outside (command output,
// skill and MCP descriptions, server and provider error messages) on its way
// to a terminal: such text must not be able to drive the terminal (move the
// cursor, retitle the window, write the clipboard with OSC 52, query and
// inject replies with DCS/APC sequences).
//
// FirstLine, OneLine, Truncate and Clip are the one set of helpers that
// shorten text for a line of a list, a notice or an excerpt, all marking a
// cut with the same Ellipsis and counting runes, never bytes. CutNote is the
// one note that marks output cut to a byte bound (proc's capped streams, the
// shell's capped command output). HeadBytes and TailBytes keep a start or an
// end within a byte bound without splitting a UTF-8 sequence.
//
// IsName is the one check of a short ASCII name that becomes a folder and a
// command word (skills, custom agent types).
//
// JSONKind and JSONValue word a JSON type mismatch in JSON's terms ("must be
// an array, not an object") instead of the decoder's Go type names.
package textutil
