package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sagebench/sagebench/internal/openai"
)

func ExampleSSEReader() {
	stream := ": keep-alive\r\ndata: {\"a\":1}\r\n\r\nevent: error\ndata: line 1\ndata: line 2\n\ndata: [DONE]\n\n"
	r := openai.NewSSEReader(strings.NewReader(stream), 0)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Printf("%q %q\n", ev.Name, ev.Data)
	}
	// Output:
	// "" "{\"a\":1}"
	// "error" "line 1\nline 2"
	// "" "[DONE]"
}

// A reasoning model's stream (vLLM's delta.reasoning_content) ending
// without [DONE] after its finish_reason: the first token of any kind is
// FirstToken, the first answer token FirstAnswerToken, and the text is
// kept only because KeepText asks for it.
func ExampleClient_Chat_reasoning() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"choices":[{"delta":{"reasoning_content":"Let me think."}}]}`,
			`{"choices":[{"delta":{"content":"42"}}]}`,
			`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":9}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	}))
	defer srv.Close()
	c, _ := openai.NewClient(openai.Config{BaseURL: srv.URL})
	defer c.Close()
	res := c.Chat(context.Background(), openai.ChatRequest{Model: "m", Stream: true, MaxTokens: 16, KeepText: true})
	fmt.Println("ok:", res.OK(), "| tokens timed:", res.TokenCount, "| usage:", res.CompletionTokens)
	fmt.Println("TTFT at the reasoning token:", res.FirstToken.Equal(res.Tokens[0]), "| first answer is token 2:", res.FirstAnswerToken.Equal(res.Tokens[1]))
	fmt.Printf("text %q, note %q\n", res.Text, res.Note)
	// Output:
	// ok: true | tokens timed: 2 | usage: 9
	// TTFT at the reasoning token: true | first answer is token 2: true
	// text "42", note "stream ended after finish_reason without [DONE]"
}
