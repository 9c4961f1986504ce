package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sagebench/sagebench/internal/stack"
)

// Start a default reference stack on a free loopback port and list its models.
func ExampleStart() {
	cfg := stack.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Index.Size = 0
	s, err := stack.Start(context.Background(), cfg, stack.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close(context.Background())
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&models)
	for _, m := range models.Data {
		fmt.Println(m.Kind, m.ID)
	}
	// Output:
	// embedding BAAI/bge-small-en-v1.5
	// llm meta-llama/Llama-3.1-8B-Instruct
}
