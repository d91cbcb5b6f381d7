// Package headless is the wire protocol of `synapse run --output-format
// json|stream-json` and `--input-format stream-json` (and of the root
// command's headless mode, which is how the Claude Agent SDK starts
// synapse): it encodes agent events as the de-facto shape of agent CLIs'
// `-p --output-format stream-json` (a system/init event, assistant and user
// messages with content blocks, and a result event, with every field the
// Agent SDK's types require; Synapse's own events are further "system"
// subtypes that readers of the base format can ignore), reads user
// messages, and speaks the SDK's control protocol on the same stdin and
// stdout (Control: initialize, interrupt, set_permission_mode, set_model,
// mcp_status; and can_use_tool, through which the permission gate's
// questions reach the host). docs/headless.md documents every event. cli
// chooses the format and drives a Stream; text output is the view's, not
// this package's.
package headless
