"""The token <-> id map: a fixed vocabulary per task (and its parameters), written down here.

    id 0   <pad>   (right padding in batches; never predicted)
    id 1   <eos>   (ends every sequence; generation stops at it)
    id 2.. the task's symbols in the order its `symbols(cfg)` lists them:
           arithmetic  + - * / ( ) =  then 0..p-1
           ed          a..z | <sep> ,  then 0..max table value (tasks/edit_distance.py: max_value)
           ed_local    as ed, then :
           lis         <sep>  then 0..max(value_range, size + 1) - 1
The text files hold tokens, never ids, so datasets written with one vocabulary read with any
other that contains their tokens.
"""
from __future__ import annotations

PAD, EOS = "<pad>", "<eos>"
PAD_ID, EOS_ID = 0, 1


class Tokenizer:
    def __init__(self, symbols: list[str]):
        self.vocab = [PAD, EOS, *symbols]
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError("tokenizer: the vocabulary lists a token twice")
        self.ids = {t: i for i, t in enumerate(self.vocab)}

    @classmethod
    def for_task(cls, task) -> "Tokenizer":
        return cls(task.symbols())

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, tokens: list[str], eos: bool = True) -> list[int]:
        """Token strings -> ids (with a closing <eos>); KeyError names the first unknown token."""
        try:
            ids = [self.ids[t] for t in tokens]
        except KeyError as e:
            raise KeyError(e.args[0]) from None
        return ids + [EOS_ID] if eos else ids

    def decode(self, ids) -> list[str]:
        """Ids -> tokens, stopping before the first <eos> and dropping padding."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i != PAD_ID:
                out.append(self.vocab[i])
        return out
