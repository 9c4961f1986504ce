package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// tokenizeOptions are the flags of `sagebench tokenize`.
type tokenizeOptions struct {
	Tokenizer    string
	ChatTemplate string
	Count        bool
}

func newTokenizeCmd() *cobra.Command {
	var o tokenizeOptions
	cmd := &cobra.Command{
		Use:   "tokenize [FILE]",
		Short: "Print the token IDs (or counts) of JSON lines of text or chat messages",
		Long: `Reads JSON lines, {"text": "..."} or {"messages": [{"role": ..., "content": ...}]},
from FILE or stdin and prints one line per input: the token IDs as a JSON array, or with
--count the count alone. Messages are rendered with --chat-template (a tokenizer_config.json
or a Jinja file) and add_generation_prompt, as a server renders a chat completion, so the
count is the server's prompt_tokens. Text is counted as it is (no BOS, no template).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTokenize(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Tokenizer, "tokenizer", tokenizer.DefaultName, "cl100k_base, o200k_base or the path of a Hugging Face tokenizer.json")
	f.StringVar(&o.ChatTemplate, "chat-template", "", "tokenizer_config.json or Jinja file whose chat template renders messages")
	f.BoolVar(&o.Count, "count", false, "print the count of tokens instead of the IDs")
	return cmd
}

// tokenizeInput is one line of input: text, or messages to render.
type tokenizeInput struct {
	Text     *string                `json:"text"`
	Messages []chattemplate.Message `json:"messages"`
}

// maxTokenizeLine bounds one input line.
const maxTokenizeLine = 16 << 20

// parseTokenizeLine reads one JSON line of tokenize's input.
func parseTokenizeLine(line []byte) (tokenizeInput, error) {
	var in tokenizeInput
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf(`want {"text": "..."} or {"messages": [{"role": "...", "content": "..."}]}: %w`, err)
	}
	if record.Trailing(dec) {
		return in, errors.New("more than one JSON value on the line")
	}
	switch {
	case in.Text != nil && in.Messages != nil:
		return in, errors.New(`"text" and "messages" both given: one per line`)
	case in.Text == nil && len(in.Messages) == 0:
		return in, errors.New(`neither "text" nor "messages" (non-empty) given`)
	}
	return in, nil
}

func runTokenize(cmd *cobra.Command, o tokenizeOptions, args []string) error {
	tok, err := tokenizer.Load(o.Tokenizer)
	if err != nil {
		return usageErrorf("--tokenizer: %v", err)
	}
	var tpl *chattemplate.Template
	if o.ChatTemplate != "" {
		if tpl, err = chattemplate.Load(o.ChatTemplate); err != nil {
			return usageErrorf("--chat-template: %v", err)
		}
	}
	in, name := io.Reader(cmd.InOrStdin()), "stdin"
	if len(args) == 1 {
		f, err := os.Open(args[0])
		if err != nil {
			return usageErrorf("%v", err)
		}
		defer f.Close()
		in, name = f, args[0]
	}
	out, err := tokenizeAll(in, name, tok, tpl, o.Count)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}

// tokenizeAll reads every line before printing: a bad line prints
// nothing but the error (exit 2).
func tokenizeAll(r io.Reader, name string, tok tokenizer.Tokenizer, tpl *chattemplate.Template, count bool) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxTokenizeLine)
	var out []byte
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		in, err := parseTokenizeLine(sc.Bytes())
		if err != nil {
			return nil, usageErrorf("%s:%d: %v", name, n, err)
		}
		text := ""
		switch {
		case in.Text != nil:
			text = *in.Text
		case tpl == nil:
			return nil, usageErrorf("%s:%d: messages need --chat-template (the model's tokenizer_config.json)", name, n)
		default:
			if text, err = tpl.Render(in.Messages, true); err != nil {
				return nil, usageErrorf("%s:%d: %v", name, n, err)
			}
		}
		out = appendTokens(out, tok.Encode(text), count)
	}
	if err := sc.Err(); err != nil {
		return nil, usageErrorf("%s: %v (a line is limited to %d bytes)", name, err, maxTokenizeLine)
	}
	return out, nil
}

func appendTokens(out []byte, ids []int, count bool) []byte {
	if count {
		return append(strconv.AppendInt(out, int64(len(ids)), 10), '\n')
	}
	out = append(out, '[')
	for i, id := range ids {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, int64(id), 10)
	}
	return append(out, ']', '\n')
}
