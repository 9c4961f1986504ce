// Package tokenizer counts and encodes text in the tokens of a model's
// tokenizer, offline: request lengths are specified in these tokens, the
// prompt synthesizer (package shape) builds text of an exact token count
// with them, dataset lengths are measured with them, and the reference
// stack's simulated engines count prompt tokens with the same one.
//
// Two kinds: the embedded tiktoken vocabularies cl100k_base (the default:
// Llama 3's tokenizer extends it) and o200k_base, from the pure-Go
// github.com/tiktoken-go/tokenizer, and a Hugging Face tokenizer.json of
// the byte-level BPE family (GPT-2, Llama 3, Qwen 2/3, DeepSeek V3 …),
// loaded by this package (HF). Load picks one by name or path. Counts
// never include special tokens a chat template or a BOS would add.
package tokenizer
