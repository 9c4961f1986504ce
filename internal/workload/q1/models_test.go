package q1

import (
	"slices"
	"testing"
)

// TestChatModels: the /tokenize preflight asks about the generate stage's
// model only; the target's model check gets the embedding model too.
func TestChatModels(t *testing.T) {
	c := Default(true)
	c.Embedding.Model, c.LLM.Model = "embed-m", "chat-m"
	if got := c.ChatModels(); !slices.Equal(got, []string{"chat-m"}) {
		t.Errorf("ChatModels %v, want [chat-m]", got)
	}
	if got := c.Models(); !slices.Contains(got, "embed-m") || !slices.Contains(got, "chat-m") {
		t.Errorf("Models %v, want both", got)
	}
}
