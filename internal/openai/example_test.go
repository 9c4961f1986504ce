package openai_test

import (
	"fmt"
	"io"
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
