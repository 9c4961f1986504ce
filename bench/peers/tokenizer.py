"""Write a tiny local Hugging Face tokenizer (no download): word-level,
split on whitespace, so the conformance server's "t " chunks are one
token each and every peer counts output tokens the same way.

    python bench/peers/tokenizer.py DIR
"""
import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
words = ["[UNK]", "[PAD]", "<s>", "</s>", "t"]
words += [chr(a) + chr(b) for a in range(97, 123) for b in range(97, 123)]  # 676 two-letter words
vocab = {w: i for i, w in enumerate(words)}
tok = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [
        {"id": vocab[w], "content": w, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for w in ("[UNK]", "[PAD]", "<s>", "</s>")
    ],
    "normalizer": None,
    "pre_tokenizer": {"type": "WhitespaceSplit"},
    "post_processor": None,
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": False},
    "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
}
json.dump(tok, open(os.path.join(out, "tokenizer.json"), "w"))
json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]", "pad_token": "[PAD]",
           "bos_token": "<s>", "eos_token": "</s>", "model_max_length": 1000000,
           "chat_template": "{% for m in messages %}{{ m['content'] }} {% endfor %}"},
          open(os.path.join(out, "tokenizer_config.json"), "w"))
json.dump({"unk_token": "[UNK]", "pad_token": "[PAD]", "bos_token": "<s>", "eos_token": "</s>"},
          open(os.path.join(out, "special_tokens_map.json"), "w"))
json.dump({"model_type": "llama", "vocab_size": len(words), "max_position_embeddings": 1000000},
          open(os.path.join(out, "config.json"), "w"))
print(out)
