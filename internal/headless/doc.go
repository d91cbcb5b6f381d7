// Package headless is the wire protocol of `synapse run --output-format
// json|stream-json` and `--input-format stream-json`: it encodes agent
// events as the de-facto shape of agent CLIs' `-p --output-format
// stream-json` (a system/init event, assistant and user messages with
// content blocks, and a result event; Synapse's own events are further
// "system" subtypes that readers of the base format can ignore), and reads
// user messages. docs/headless.md documents every event. cli chooses the
// format and drives a Stream; text output is the view's, not this package's.
package headless
