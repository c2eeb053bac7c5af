"""Byte-level BPE from its definition: trainer, encoder, decoder and a Hugging Face tokenizer.json.

Encoding (what the `tokenizers` library does for a Qwen2-style tokenizer.json):
  1. cut the text at every occurrence of an added token (longest match first); those pieces map
     straight to their ids and are not normalized;
  2. the rest is NFC-normalized, then split by the pre-tokenizer regex below (Split, "Isolated":
     every match is a piece, nothing is dropped);
  3. each piece's UTF-8 bytes are mapped to printable characters by GPT-2's byte-to-unicode
     table, and BPE merges are applied by rank: repeatedly merge the adjacent pair with the
     lowest rank (all of its non-overlapping occurrences, left to right) until none is in the
     merge list; each final symbol is a vocab entry.
Decoding: tokens' strings are concatenated, each character mapped back to its byte, and the bytes
read as UTF-8.
"""

import unicodedata
from collections import Counter

import regex

# The pre-tokenizer split pattern of Qwen2's tokenizer.json (letters with an optional leading
# non-letter, single digits, punctuation runs, newlines, whitespace).
SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_SPLIT = regex.compile(SPLIT_PATTERN)


def bytes_to_unicode():
    """GPT-2's table: printable Latin-1 bytes map to themselves, the other 68 bytes to 256+n."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    table = {}
    n = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def pretokenize(text):
    return _SPLIT.findall(unicodedata.normalize("NFC", text))


def to_symbols(piece):
    return [BYTE_TO_CHAR[b] for b in piece.encode("utf-8")]


def train(corpus_texts, num_merges):
    """Classic BPE training over pre-tokenized words: merge the most frequent adjacent pair.

    Ties go to the lexicographically smallest pair (as a tuple of strings), so training is
    deterministic. Returns the merge list [(left, right), ...] in rank order.
    """
    words = Counter()
    for text in corpus_texts:
        for piece in pretokenize(text):
            words[tuple(to_symbols(piece))] += 1
    words = dict(words)
    merges = []
    for _ in range(num_merges):
        pairs = Counter()
        for w, c in words.items():
            for i in range(len(w) - 1):
                pairs[(w[i], w[i + 1])] += c
        if not pairs:
            break
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(best)
        words = {tuple(_merge(list(w), best)): c for w, c in words.items()}
    return merges


def _merge(symbols, pair):
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == pair[0] and symbols[i + 1] == pair[1]:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


class ByteLevelBPE:
    """vocab: token string -> id (bytes first, in byte order, then merges in rank order);
    added: list of (content, id, special) matched in raw text before anything else."""

    def __init__(self, merges, added):
        self.merges = list(merges)
        self.ranks = {pair: r for r, pair in enumerate(self.merges)}
        self.vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
        for left, right in self.merges:
            tok = left + right
            if tok in self.vocab:
                raise ValueError(f"merge result {tok!r} is already in the vocab")
            self.vocab[tok] = len(self.vocab)
        self.added = [(c, len(self.vocab) + i, special) for i, (c, special) in enumerate(added)]
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        for c, i, _ in self.added:
            self.id_to_token[i] = c
        self.size = len(self.id_to_token)
        # longest first so a shorter added token never cuts a longer one
        self._added_re = regex.compile("|".join(regex.escape(c) for c, _, _ in sorted(self.added, key=lambda a: -len(a[0]))))
        self._added_id = {c: i for c, i, _ in self.added}

    def token_id(self, content):
        return self._added_id.get(content, self.vocab.get(content))

    def _bpe(self, symbols):
        while len(symbols) > 1:
            ranked = [(self.ranks.get((symbols[i], symbols[i + 1])), i) for i in range(len(symbols) - 1)]
            ranked = [r for r in ranked if r[0] is not None]
            if not ranked:
                break
            best = min(ranked)[0]
            symbols = _merge(symbols, self.merges[best])
        return symbols

    def encode(self, text):
        """text -> ids. No special tokens are added (no BOS/EOS): only what the text holds."""
        ids = []
        pos = 0
        for m in self._added_re.finditer(text):
            ids += self._encode_plain(text[pos : m.start()])
            ids.append(self._added_id[m.group(0)])
            pos = m.end()
        ids += self._encode_plain(text[pos:])
        return ids

    def _encode_plain(self, text):
        ids = []
        for piece in pretokenize(text):
            for sym in self._bpe(to_symbols(piece)):
                ids.append(self.vocab[sym])
        return ids

    def decode(self, ids):
        out = bytearray()
        for i in ids:
            tok = self.id_to_token[i]
            out += bytes(CHAR_TO_BYTE[c] for c in tok)
        return out.decode("utf-8", errors="replace")

    def tokenizer_json(self):
        """The Hugging Face tokenizers serialization (same top-level keys and component types as
        Qwen2's tokenizer.json)."""
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [
                {
                    "id": i,
                    "content": c,
                    "single_word": False,
                    "lstrip": False,
                    "rstrip": False,
                    "normalized": False,
                    "special": special,
                }
                for c, i, special in self.added
            ],
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": SPLIT_PATTERN}, "behavior": "Isolated", "invert": False},
                    dict(byte_level),
                ],
            },
            "post_processor": dict(byte_level),
            "decoder": dict(byte_level),
            "model": {
                "type": "BPE",
                "dropout": None,
                "unk_token": None,
                "continuing_subword_prefix": "",
                "end_of_word_suffix": "",
                "fuse_unk": False,
                "byte_fallback": False,
                "ignore_merges": False,
                "vocab": self.vocab,
                "merges": [f"{a} {b}" for a, b in self.merges],
            },
        }
