package gemini

import "encoding/json"

// The Gemini API's generateContent shapes, as much of them as this adapter
// sends and reads (https://ai.google.dev/api/generate-content). Fields
// this adapter never sets are left out; unknown fields in answers are
// ignored.

type generateRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []tool            `json:"tools,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

// content is one turn: role "user" or "model".
type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part holds one of text, inlineData, functionCall or functionResponse.
// ThoughtSignature is opaque bytes, base64 on the wire (encoding/json's
// []byte encoding is the same standard base64).
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature []byte            `json:"thoughtSignature,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type blob struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

// functionDeclaration sends the tool's JSON Schema as it is
// (parametersJsonSchema), not translated to the OpenAPI subset that
// "parameters" takes.
type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts"`
	ThinkingBudget  int  `json:"thinkingBudget"`
}

// generateResponse is one streamed chunk (or the whole answer).
type generateResponse struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ModelVersion   string          `json:"modelVersion"`
	// Error is set when the server reports a failure inside a 200 stream.
	Error *apiError `json:"error"`
}

type candidate struct {
	Content       *content `json:"content"`
	FinishReason  string   `json:"finishReason"`
	FinishMessage string   `json:"finishMessage"`
}

type promptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

// usageMetadata is the counts so far; promptTokenCount includes the cached
// tokens.
type usageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
}

// Finish reasons this adapter tells apart.
const (
	finishStop        = "STOP"
	finishMaxTokens   = "MAX_TOKENS"
	finishMalformed   = "MALFORMED_FUNCTION_CALL"
	finishUnspecified = "FINISH_REASON_UNSPECIFIED"
)
