"""
A torch-style sequence-to-sequence Transformer
==============================================

``nn.Transformer`` learning to reverse strings of digits, unchanged on torch and on lucid.
Laid out as PyTorch's translation tutorial: token embeddings scaled by ``sqrt(d_model)``
plus sinusoidal positional encodings (a registered buffer), an encoder-decoder
``nn.Transformer`` (``batch_first``), a linear generator; strings of 3 to 7 digits padded
to one length, with key-padding masks for the source, the target and the memory and the
causal mask for the target (``generate_square_subsequent_mask``); teacher forcing and a
cross-entropy that ignores the padding; then greedy decoding of held-out strings. Choose
the import with ``--backend``::

    python examples/transformer_seq2seq.py                    # import lucid as torch
    python examples/transformer_seq2seq.py --backend torch    # import torch
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import random

DIGITS, BOS, EOS, PAD = 10, 10, 11, 12
VOCAB = 13
MAX_DIGITS = 7
LENGTH = MAX_DIGITS + 2  # BOS ... EOS


def make_pairs(count: int, seed: int):
    """``count`` random digit strings (3 to 7 digits) and their reversals, as padded token lists."""
    rng = random.Random(seed)
    sources, targets = [], []
    for _ in range(count):
        digits = [rng.randrange(DIGITS) for _ in range(rng.randint(3, MAX_DIGITS))]
        pad = [PAD] * (MAX_DIGITS - len(digits))
        sources.append(digits + [EOS] + pad + [PAD])
        targets.append([BOS] + digits[::-1] + [EOS] + pad)
    return sources, targets


def make_model(torch, d_model: int, nhead: int, layers: int, dim_feedforward: int, dropout: float):
    nn = torch.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, max_len: int = 64):
            super().__init__()
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, d_model)
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(x + self.pe[:, :x.size(1)])

    class Seq2SeqTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_tok_emb = nn.Embedding(VOCAB, d_model)
            self.tgt_tok_emb = nn.Embedding(VOCAB, d_model)
            self.positional_encoding = PositionalEncoding()
            self.transformer = nn.Transformer(d_model=d_model, nhead=nhead, num_encoder_layers=layers,
                                              num_decoder_layers=layers, dim_feedforward=dim_feedforward,
                                              dropout=dropout, batch_first=True)
            self.generator = nn.Linear(d_model, VOCAB)

        def embed(self, embedding, tokens):
            return self.positional_encoding(embedding(tokens) * math.sqrt(d_model))

        def forward(self, src, tgt):
            # boolean masks throughout (True: not attended), as the padding masks are
            tgt_mask = torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool, device=src.device).triu(1)
            src_padding, tgt_padding = src == PAD, tgt == PAD
            out = self.transformer(self.embed(self.src_tok_emb, src), self.embed(self.tgt_tok_emb, tgt),
                                   tgt_mask=tgt_mask, src_key_padding_mask=src_padding,
                                   tgt_key_padding_mask=tgt_padding, memory_key_padding_mask=src_padding)
            return self.generator(out)

        @torch.no_grad()
        def greedy_decode(self, src):
            """Each target token in turn, the most likely after those chosen so far."""
            src_padding = src == PAD
            memory = self.transformer.encoder(self.embed(self.src_tok_emb, src), src_key_padding_mask=src_padding)
            ys = torch.full((src.size(0), 1), BOS, dtype=torch.long, device=src.device)
            for _ in range(LENGTH - 1):
                mask = nn.Transformer.generate_square_subsequent_mask(ys.size(1), device=src.device,
                                                                      dtype=memory.dtype)
                out = self.transformer.decoder(self.embed(self.tgt_tok_emb, ys), memory, tgt_mask=mask,
                                               memory_key_padding_mask=src_padding)
                ys = torch.cat([ys, self.generator(out[:, -1]).argmax(dim=-1, keepdim=True)], dim=1)
            return ys

    return Seq2SeqTransformer()


def train(torch, epochs: int = 60, batches: int = 10, batch: int = 32, d_model: int = 32, nhead: int = 4,
          layers: int = 2, dim_feedforward: int = 64, dropout: float = 0.0, lr: float = 3e-3,
          dtype_name: str = "float32",
          device: str = "cpu", initial_state=None, log=None):
    """Train; return the state it started from, the per-step losses and the held-out loss and accuracy."""
    val_sources, val_targets = make_pairs(64, seed=0)
    torch.manual_seed(0)
    model = make_model(torch, d_model, nhead, layers, dim_feedforward, dropout).to(
        device=device, dtype=getattr(torch, dtype_name))
    if initial_state is not None:
        model.load_state_dict(initial_state)
    initial = {key: value.detach().clone() for key, value in model.state_dict().items()}
    criterion = torch.nn.CrossEntropyLoss(ignore_index=PAD)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    losses = []
    for epoch in range(epochs):
        sources, targets = make_pairs(batches * batch, seed=1 + epoch)  # fresh strings every epoch
        src_all = torch.tensor(sources, dtype=torch.long, device=device)
        tgt_all = torch.tensor(targets, dtype=torch.long, device=device)
        model.train()
        for i in range(0, len(sources), batch):
            src, tgt = src_all[i:i + batch], tgt_all[i:i + batch]
            tgt_input, tgt_out = tgt[:, :-1], tgt[:, 1:]  # teacher forcing
            logits = model(src, tgt_input)
            optimizer.zero_grad()
            loss = criterion(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        if log:
            log(f"epoch {epoch + 1}  train loss {losses[-1]:.4f}")
    model.eval()
    src = torch.tensor(val_sources, dtype=torch.long, device=device)
    tgt = torch.tensor(val_targets, dtype=torch.long, device=device)
    with torch.no_grad():
        logits = model(src, tgt[:, :-1])
        val_loss = criterion(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1)).item()
    decoded = model.greedy_decode(src)
    ends = [target.index(EOS) + 1 for target in val_targets]  # what follows EOS is padding, never learnt
    accuracy = sum(decoded[k, :n].tolist() == val_targets[k][:n] for k, n in enumerate(ends)) / len(ends)
    if log:
        log(f"held-out loss {val_loss:.4f}, strings reversed exactly {accuracy:.0%}")
    return {"initial_state": initial, "losses": losses, "final": val_loss, "accuracy": accuracy}


def main() -> None:
    parser = argparse.ArgumentParser(description="A torch-style nn.Transformer reversing digit strings, unchanged "
                                                 "on torch and on lucid.")
    parser.add_argument("--backend", choices=["lucid", "torch"], default=os.environ.get("EXAMPLE_BACKEND", "lucid"))
    parser.add_argument("--epochs", type=int, default=60, help="of 10 batches each (default 60)")
    parser.add_argument("--device", default="cpu", help='"cpu"; "gpu" (MLX) with lucid, "cuda" with torch')
    args = parser.parse_args()
    torch = importlib.import_module(args.backend)  # `import torch`, or `import lucid as torch`
    result = train(torch, args.epochs, device=args.device, log=print)
    print(f"done with {args.backend}: held-out loss {result['final']:.4f}, accuracy {result['accuracy']:.0%}")


if __name__ == "__main__":
    main()
