"""Writes tests/fixtures/hf/bpe_corpus.json: the texts of corpus.build(), on which
bpe_tokenizer.train learned the fixture tokenizer's 123 merges (tests/fixtures/hf/*/tokenizer.json).

With the corpus stored, the lab's own BPE trainer (src/models/hf/bpe-trainer.ts) is checked against
this independent one: trained on these texts it must learn the same merges in the same order.

    /usr/bin/python3 scripts/reference/write_bpe_corpus.py
"""

import json
import os

import corpus

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "hf", "bpe_corpus.json")

if __name__ == "__main__":
    texts = corpus.build()
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(
            {
                "source": "scripts/reference/corpus.py build(seed=7), written by write_bpe_corpus.py",
                "merges_in": "tests/fixtures/hf/llama-tiny/tokenizer.json (bpe_tokenizer.train, 123 merges)",
                "texts": texts,
            },
            f,
            ensure_ascii=False,
            indent=1,
        )
        f.write("\n")
