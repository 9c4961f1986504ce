package remote_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/sagebench/sagebench/internal/stack/remote"
)

// EmbedJSON hands over each vector as the engine wrote it, in input
// order, for a gateway that writes it on as it is.
func ExampleEmbedder_EmbedJSON() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"object":"list","data":[`+
			`{"object":"embedding","index":1,"embedding":[0.5,-2]},`+
			`{"object":"embedding","index":0,"embedding":[1e-7, 3]}],`+
			`"model":"m","usage":{"prompt_tokens":4,"total_tokens":4}}`)
	}))
	defer srv.Close()
	e, err := remote.NewEmbedder(remote.Config{ID: "emb", URL: srv.URL, Model: "m"})
	if err != nil {
		fmt.Println(err)
		return
	}
	vecs, usage, err := e.EmbedJSON(context.Background(), []string{"first", "second"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %s, %d prompt tokens\n", vecs[0], vecs[1], usage.PromptTokens)
	// Output: [1e-7, 3] [0.5,-2], 4 prompt tokens
}
