// Package tokenizer counts and encodes text in the tokens of a model's
// tokenizer, offline: request lengths are specified in these tokens, the
// prompt synthesizer (package shape) builds text of an exact token count
// with them, dataset lengths are measured with them, and the reference
// stack's simulated engines count prompt tokens with the same one.
//
// Two kinds: the embedded tiktoken vocabularies cl100k_base (the default:
// Llama 3's tokenizer extends it) and o200k_base, from the pure-Go
// github.com/tiktoken-go/tokenizer, and a Hugging Face tokenizer.json,
// loaded by this package (HF): byte-level BPE (GPT-2, Llama 3, Qwen,
// DeepSeek V3), SentencePiece-style BPE with byte fallback (Llama 2,
// Mistral, Gemma), WordPiece (BERT, most embedding models) and Unigram
// (T5, XLM-R, with SentencePiece's precompiled charsmap), with their
// normalizers and pre-tokenizers, at parity with Hugging Face's
// tokenizers (testdata/parity). Load picks one by name or path.
// Counts are of the text given: special tokens a chat template or a BOS
// adds are counted when the text holds them (package chattemplate
// renders them in), as a chat server counts a rendered prompt;
// CountWithSpecialTokens adds what the tokenizer.json's post-processor
// adds around one input (BERT's [CLS] and [SEP]), as an embedding server
// counts it.
package tokenizer
