// Package chattemplate renders a chat request's messages into the prompt
// text a server feeds its model, with the model's Jinja chat template (the
// chat_template of its tokenizer_config.json), the way Hugging Face's
// transformers does (apply_chat_template: trim_blocks, lstrip_blocks,
// raise_exception, add_generation_prompt). Counting that text in the
// model's tokenizer gives what the server reports as prompt_tokens. The
// Jinja dialect is github.com/nikolalohinski/gonja/v2's; a template that
// includes or imports another file is refused.
package chattemplate
