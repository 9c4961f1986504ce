#!/usr/bin/env python3
"""Fixtures and ground truth for sagebench's tokenizer and chat-template
parity tests, from Hugging Face's `tokenizers` and `transformers`.

  gen.py build             train the tiny tokenizers (*.json here), write the
                           corpus and the golden digests, and the chat-template
                           goldens in internal/chattemplate/testdata
  gen.py goldens          rewrite the golden digests from the saved *.json
  gen.py precompiled      train the SentencePiece model (nmt_nfkc charsmap),
                           convert it as transformers converts XLM-R's, write
                           precompiled.json and its golden digests
  gen.py corpus SEED N     print N varied strings as JSON lines {"text": ...}
  gen.py encode MODEL      read JSON lines {"text": ...} on stdin, print the
                           token IDs of each (no special tokens added)
  gen.py encode-special MODEL  the same with add_special_tokens=True (what
                           the post-processor adds: an embedding input's count)
  gen.py chat              read JSON lines {"tokenizer","template","messages"}
                           on stdin, print apply_chat_template's IDs

Everything is generated: no file of any model is shipped. `build` and
`precompiled` also need sentencepiece==0.2.1 and protobuf==6.33.1 in the
virtualenv (only to train the SentencePiece model; the tests' commands
need tokenizers, transformers and jinja2 alone).
"""
import gzip, json, os, random, sys, unicodedata, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CHAT = os.path.join(HERE, "..", "..", "..", "chattemplate", "testdata")

WORDS = """the of and to in is for on with as by at from that this it be are was were not or but
have has had will would can could should may might must do does did make made model system request
token engine batch queue cache latency throughput policy tenant priority service level objective
schedule gateway router stream vector index retrieve generate answer question context document
summary benchmark load burst steady fair share deadline river mountain forest ocean desert valley
island garden harbor bridge morning evening winter summer spring autumn season moment minute hour
letter number reason example pattern method problem theory light sound colour shape motion energy
power force field wave people friend family teacher student doctor worker writer reader player city
street house school market office station village country world good great little old young right
naïve café résumé Zürich straße Ελλάδα привет мир don't it's we'll I'm they've Hello World""".split()

CODE = ["func main() {\n\tfmt.Println(\"hi\")\n}", "for i := 0; i < n; i++ {", "if err != nil { return err }",
        "def f(x):\n    return x ** 2  # square", "x = [i*i for i in range(10)]", "#include <stdio.h>",
        "int main(void) { return 0; }", "SELECT * FROM t WHERE a >= 3;", "a && b || !c", "<div class=\"x\">&nbsp;</div>",
        "{\"key\": [1, 2.5e-3, null]}", "    indented\n        more", "x+=1;y-=2;z*=3", "$HOME/.config/app.yaml",
        "https://example.com/a?b=c&d=e#f", "0x1F 0b1010 1_000_000 3.14159", "λx.x → ∀y∃z", "¯\\_(ツ)_/¯"]

WS = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000", "\u2003", "    \n\t  ", "\u200b", "\x0b", "\x0c"]


def rand_char(rng):
    while True:
        kind = rng.random()
        if kind < 0.3:
            cp = rng.randint(0x20, 0x2FF)
        elif kind < 0.5:
            cp = rng.choice([rng.randint(0x4E00, 0x9FFF), rng.randint(0x3040, 0x30FF), rng.randint(0xAC00, 0xD7A3)])
        elif kind < 0.65:
            cp = rng.randint(0x1F300, 0x1FAFF)
        elif kind < 0.7:
            cp = rng.randint(0, 0x1F)
        else:
            cp = rng.randint(0x80, 0x2FFFF)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if unicodedata.category(c) in ("Cn", "Co", "Cs"):
            continue
        return c


def emoji(rng):
    base = chr(rng.randint(0x1F600, 0x1F64F))
    r = rng.random()
    if r < 0.3:
        return base + chr(rng.randint(0x1F3FB, 0x1F3FF))
    if r < 0.5:
        return "\U0001F468\u200d\U0001F469\u200d\U0001F467"
    if r < 0.6:
        return "\U0001F1EF\U0001F1F5"
    return base


def prose(rng, n):
    out = []
    for i in range(n):
        w = rng.choice(WORDS)
        if i == 0 or rng.random() < 0.1:
            w = w.capitalize()
        if rng.random() < 0.08:
            w += rng.choice([",", ".", "!", "?", ";", ":", "...", "\""])
        out.append(w)
    return " ".join(out)


def piece(rng):
    k = rng.random()
    if k < 0.3:
        return prose(rng, rng.randint(1, 25))
    if k < 0.45:
        return rng.choice(CODE)
    if k < 0.55:
        return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(rng.randint(1, 12)))
    if k < 0.62:
        return "".join(emoji(rng) for _ in range(rng.randint(1, 4)))
    if k < 0.72:
        return "".join(rng.choice(WS) for _ in range(rng.randint(1, 5)))
    if k < 0.85:
        return "".join(rand_char(rng) for _ in range(rng.randint(1, 15)))
    if k < 0.9:
        return unicodedata.normalize(rng.choice(["NFD", "NFKD"]), prose(rng, 5))
    return str(rng.randint(0, 10**rng.randint(1, 12))) + rng.choice(["", "%", " ms", "th"])


def corpus(seed, n):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = "".join(piece(rng) + (rng.choice(WS) if rng.random() < 0.3 else "") for _ in range(rng.randint(1, 4)))
        out.append(s)
    return out


def training_text():
    rng = random.Random(7)
    return [prose(rng, 40) for _ in range(3000)] + corpus(8, 300) + CODE * 20


def build_models():
    from tokenizers import Tokenizer, models, trainers, normalizers as N, pre_tokenizers as P, Regex
    text = training_text()
    out = {}

    # WordPiece, as BERT's tokenizer.json (bge, MiniLM, e5).
    t = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    t.normalizer = N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    t.pre_tokenizer = P.BertPreTokenizer()
    t.train_from_iterator(text, trainers.WordPieceTrainer(vocab_size=3000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    out["wordpiece"] = t

    # Unigram, as T5's and XLM-R's (Metaspace, always a prefix space).
    t = Tokenizer(models.Unigram())
    t.normalizer = N.Sequence([N.NFKC(), N.Replace(Regex(" {2,}"), " ")])
    t.pre_tokenizer = P.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    t.train_from_iterator(text, trainers.UnigramTrainer(vocab_size=3000, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"))
    out["unigram"] = t

    # SentencePiece-style BPE with byte fallback (Llama 2, Mistral, Gemma).
    t = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    t.pre_tokenizer = P.Metaspace(replacement="\u2581", prepend_scheme="first", split=True)
    t.normalizer = N.Replace(" ", "\u2581")
    t.train_from_iterator(text, trainers.BpeTrainer(vocab_size=3000, special_tokens=["<unk>", "<s>", "</s>"]))
    sp = json.loads(t.to_str())
    vocab = sp["model"]["vocab"]
    for b in range(256):
        vocab.setdefault("<0x%02X>" % b, len(vocab))
    # Llama 2's form: the normalizer prepends and replaces, no pre-tokenizer.
    llama2 = json.loads(json.dumps(sp))
    llama2["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
    llama2["pre_tokenizer"] = None
    out["spbpe"] = Tokenizer.from_str(json.dumps(llama2))
    # The newer form: Metaspace (prepend_scheme first, no split), no normalizer.
    meta = json.loads(json.dumps(sp))
    meta["normalizer"] = None
    meta["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    out["spbpe_metaspace"] = Tokenizer.from_str(json.dumps(meta))

    # Byte-level BPE with Llama 3's split, for the chat templates.
    t = Tokenizer(models.BPE())
    t.normalizer = N.NFC()
    llama3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    t.pre_tokenizer = P.Sequence([P.Split(Regex(llama3), behavior="isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])
    t.train_from_iterator(text, trainers.BpeTrainer(vocab_size=3000, initial_alphabet=P.ByteLevel.alphabet()))
    out["bytebpe"] = t
    return out


def build_precompiled():
    """A SentencePiece Unigram model trained with the nmt_nfkc rule (T5's
    and XLM-R's precompiled_charsmap), converted to a tokenizer.json by
    transformers' XLMRobertaConverter: Precompiled + Replace normalizers,
    Metaspace, Unigram, <s> $A </s>."""
    import io, tempfile
    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer
    from transformers.convert_slow_tokenizer import convert_slow_tokenizer
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(training_text()), model_writer=buf, vocab_size=1500,
                                   model_type="unigram", normalization_rule_name="nmt_nfkc", character_coverage=0.9995,
                                   num_threads=1, minloglevel=2)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "spm.model")
        with open(path, "wb") as f:
            f.write(buf.getvalue())
        t = convert_slow_tokenizer(XLMRobertaTokenizer(vocab_file=path))
    t.save(os.path.join(HERE, "precompiled.json"), pretty=False)


CHAT_MODELS = {  # template: (tokenizer, special tokens, bos, eos, system allowed)
    "llama3": ("bytebpe", ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"], "<|begin_of_text|>", "<|eot_id|>", True),
    "qwen2.5": ("bytebpe", ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], None, "<|im_end|>", True),
    "mistral": ("spbpe", ["[INST]", "[/INST]"], "<s>", "</s>", True),
    "gemma": ("spbpe_metaspace", ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"], "<bos>", "<eos>", False),
    "gemma3": ("spbpe_metaspace", ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"], "<bos>", "<eos>", True),
}


def chat_tokenizer(template):
    from tokenizers import Tokenizer, AddedToken, processors
    base, specials, bos, eos, _ = CHAT_MODELS[template]
    t = Tokenizer.from_file(os.path.join(HERE, base + ".json"))
    t.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    if template == "llama3":
        # Llama 3's post-processor adds <|begin_of_text|> too: the template
        # writes it and apply_chat_template must not count it twice.
        b = [("<|begin_of_text|>", t.token_to_id("<|begin_of_text|>"))]
        t.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=False),
                                                processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1", special_tokens=b)])
    return t


def conversations(template, n):
    rng = random.Random(zlib.crc32(template.encode()))
    system_ok = CHAT_MODELS[template][4]
    convs = []
    for i in range(n):
        msgs = []
        if system_ok and i % 2 == 0:
            msgs.append({"role": "system", "content": prose(rng, rng.randint(3, 30))})
        turns = rng.randint(1, 3)
        for k in range(turns):
            msgs.append({"role": "user", "content": text_content(rng)})
            if k + 1 < turns:
                msgs.append({"role": "assistant", "content": text_content(rng)})
        convs.append(msgs)
    return convs


def text_content(rng):
    s = prose(rng, rng.randint(1, 40)) if rng.random() < 0.7 else piece(rng)
    r = rng.random()
    if r < 0.1:
        s = "  " + s
    elif r < 0.2:
        s = s + "\n\n"
    return s


def apply_template(tok, template, msgs):
    from transformers import PreTrainedTokenizerFast
    base, specials, bos, eos, _ = CHAT_MODELS[template]
    src = open(os.path.join(CHAT, "templates", template + ".jinja")).read()
    if src.endswith("\n"):
        src = src[:-1]
    pt = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos, eos_token=eos, chat_template=src)
    ids = pt.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
    text = pt.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
    return ids, text


def digest(ids):
    return "%08x" % zlib.crc32(json.dumps(ids, separators=(",", ":")).encode())


def goldens(names, texts):
    # From the saved files, not the trained objects: a Unigram score read
    # back by serde_json can differ in the last bit from the trained one.
    from tokenizers import Tokenizer
    for name in names:
        t = Tokenizer.from_file(os.path.join(HERE, name + ".json"))
        with open(os.path.join(HERE, name + ".golden"), "w") as f:
            for s in texts:
                ids = t.encode(s, add_special_tokens=False).ids
                f.write("%d %s\n" % (len(ids), digest(ids)))


def build():
    models = build_models()
    for name, t in models.items():
        t.save(os.path.join(HERE, name + ".json"), pretty=False)
    texts = corpus(1, 10000)
    with gzip.GzipFile(os.path.join(HERE, "corpus.jsonl.gz"), "wb", mtime=0) as f:
        for s in texts:
            f.write((json.dumps({"text": s}) + "\n").encode())
    goldens(models, texts)
    build_precompiled()
    goldens(["precompiled"], texts)
    for template, spec in CHAT_MODELS.items():
        tok = chat_tokenizer(template)
        cfg = {"chat_template": open(os.path.join(CHAT, "templates", template + ".jinja")).read().removesuffix("\n"),
               "bos_token": spec[2], "eos_token": spec[3]}
        tok.save(os.path.join(CHAT, template + ".tokenizer.json"), pretty=False)
        with open(os.path.join(CHAT, template + ".tokenizer_config.json"), "w") as f:
            json.dump(cfg, f, indent=1)
        with open(os.path.join(CHAT, template + ".golden.jsonl"), "w") as f:
            for msgs in conversations(template, 100):
                ids, text = apply_template(tok, template, msgs)
                f.write(json.dumps({"messages": msgs, "ids": ids, "text": text}, ensure_ascii=False) + "\n")


def main():
    cmd = sys.argv[1]
    if cmd == "build":
        build()
    elif cmd == "goldens":
        goldens(["wordpiece", "unigram", "spbpe", "spbpe_metaspace", "bytebpe", "precompiled"], corpus(1, 10000))
    elif cmd == "precompiled":
        build_precompiled()
        goldens(["precompiled"], corpus(1, 10000))
    elif cmd == "corpus":
        for s in corpus(int(sys.argv[2]), int(sys.argv[3])):
            print(json.dumps({"text": s}))
    elif cmd == "encode":
        from tokenizers import Tokenizer
        t = Tokenizer.from_file(sys.argv[2])
        for line in sys.stdin:
            print(json.dumps(t.encode(json.loads(line)["text"], add_special_tokens=False).ids))
    elif cmd == "encode-special":
        from tokenizers import Tokenizer
        t = Tokenizer.from_file(sys.argv[2])
        for line in sys.stdin:
            print(json.dumps(t.encode(json.loads(line)["text"], add_special_tokens=True).ids))
    elif cmd == "chat":
        template = sys.argv[2]
        tok = chat_tokenizer(template)
        for line in sys.stdin:
            ids, text = apply_template(tok, template, json.loads(line)["messages"])
            print(json.dumps({"ids": ids, "text": text}, ensure_ascii=False))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
