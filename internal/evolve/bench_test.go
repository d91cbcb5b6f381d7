package evolve

import (
	"fmt"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
)

// A long session: scoring and the transcript run after every worthwhile turn.
func longSession() []llm.Message {
	conv := []llm.Message{user("build the report")}
	for i := range 500 {
		conv = append(conv, calls(fmt.Sprintf("grep -rn pattern%d src/ > out%d.txt", i, i)), result(i%7 == 0))
	}
	return append(conv, answer("done"))
}

func BenchmarkScore(b *testing.B) {
	conv := longSession()
	for b.Loop() {
		Score(conv)
	}
}

func BenchmarkTranscript(b *testing.B) {
	conv := longSession()
	for b.Loop() {
		Transcript(conv, DefaultTranscriptChars, 0)
	}
}
