"""
A torch-style character-level GPT
=================================

A small GPT in nanoGPT's layout, unchanged on torch and on lucid: token and position
embeddings, blocks of LayerNorm, causal self-attention (its own module over
``F.scaled_dot_product_attention(..., is_causal=True)``), LayerNorm and a GELU MLP with
residual connections, a final LayerNorm and a head tied to the token embedding; nanoGPT's
initialisation and its AdamW with weight decay on the matrices only. It learns the
characters of a synthetic corpus (sentences from a small grammar), then writes text from
a prompt, drawing each next character from the model's distribution with
``torch.multinomial``, as nanoGPT does (each framework from its own random numbers, so the
two samples differ). Choose the import with ``--backend``::

    python examples/char_gpt.py                    # import lucid as torch
    python examples/char_gpt.py --backend torch    # import torch
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import random

SUBJECTS = ["the cat", "a dog", "my friend", "the teacher", "a bird"]
VERBS = ["sees", "likes", "follows", "draws", "hears"]
OBJECTS = ["the moon", "a tree", "the river", "an apple", "the city"]


def make_text(sentences: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}." for _ in range(sentences))


def make_model(torch, vocab_size: int, block_size: int, n_layer: int, n_head: int, n_embd: int, dropout: float,
               activation: str = "gelu"):
    """nanoGPT's ``GPT`` (bias everywhere, as its default); ``activation``: the MLP's, "gelu" or "relu"."""
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)  # the query, key and value projections at once
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.resid_dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout if self.training else 0, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # the heads side by side again
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.act = nn.GELU() if activation == "gelu" else nn.ReLU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.act(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(n_embd), CausalSelfAttention()
            self.ln_2, self.mlp = nn.LayerNorm(n_embd), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
                drop=nn.Dropout(dropout), h=nn.ModuleList([Block() for _ in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying
            self.apply(self._init_weights)
            for name, p in self.named_parameters():  # GPT-2's scaled init of the residual projections
                if name.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss

        @torch.no_grad()
        def generate(self, idx, max_new_tokens: int):
            for _ in range(max_new_tokens):
                logits, _ = self(idx[:, -block_size:])
                probs = F.softmax(logits[:, -1, :], dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    return GPT()


def configure_optimizer(torch, model, weight_decay: float, lr: float):
    """nanoGPT's AdamW: weight decay on the matrices (and embeddings), none on biases and norms."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def get_batch(torch, data, block_size: int, batch: int, rng: random.Random, device):
    """``batch`` random windows of the text and, shifted by one, their next characters."""
    starts = [rng.randrange(len(data) - block_size) for _ in range(batch)]
    x = torch.tensor([data[i:i + block_size] for i in starts], dtype=torch.long, device=device)
    y = torch.tensor([data[i + 1:i + 1 + block_size] for i in starts], dtype=torch.long, device=device)
    return x, y


def train(torch, epochs: int = 30, steps_per_epoch: int = 10, block_size: int = 32, batch: int = 16,
          n_layer: int = 2, n_head: int = 4, n_embd: int = 64, dropout: float = 0.1, sample_length: int = 40,
          dtype_name: str = "float32", device: str = "cpu", initial_state=None, log=None):
    """Train ``epochs`` of ``steps_per_epoch`` batches; return the state it started from, the per-step
    losses, the validation loss and a sample."""
    text, val_text = make_text(400, seed=0), make_text(40, seed=1)
    chars = sorted(set(text + val_text))
    stoi = {c: i for i, c in enumerate(chars)}
    data, val_data = [stoi[c] for c in text], [stoi[c] for c in val_text]
    torch.manual_seed(0)
    model = make_model(torch, len(chars), block_size, n_layer, n_head, n_embd, dropout).to(
        device=device, dtype=getattr(torch, dtype_name))
    if initial_state is not None:
        model.load_state_dict(initial_state)
    initial = {key: value.detach().clone() for key, value in model.state_dict().items()}
    optimizer = configure_optimizer(torch, model, weight_decay=0.1, lr=3e-3)
    rng = random.Random(0)
    losses = []
    model.train()
    for epoch in range(epochs):
        for _ in range(steps_per_epoch):
            x, y = get_batch(torch, data, block_size, batch, rng, device)
            _, loss = model(x, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
        if log:
            log(f"epoch {epoch + 1}  train loss {losses[-1]:.4f}")
    model.eval()
    with torch.no_grad():
        x, y = get_batch(torch, val_data, block_size, 8, random.Random(1), device)
        val_loss = model(x, y)[1].item()
        prompt = torch.tensor([[stoi[c] for c in "the cat "]], dtype=torch.long, device=device)
        sample = "".join(chars[i] for i in model.generate(prompt, sample_length)[0].tolist())
    if log:
        log(f"validation loss {val_loss:.4f}; from 'the cat ': {sample!r}")
    return {"initial_state": initial, "losses": losses, "final": val_loss, "sample": sample}


def main() -> None:
    parser = argparse.ArgumentParser(description="A torch-style character-level GPT, unchanged on torch and on lucid.")
    parser.add_argument("--backend", choices=["lucid", "torch"], default=os.environ.get("EXAMPLE_BACKEND", "lucid"))
    parser.add_argument("--epochs", type=int, default=30, help="of 10 steps each (default 30)")
    parser.add_argument("--device", default="cpu", help='"cpu"; "gpu" (MLX) with lucid, "cuda" with torch')
    args = parser.parse_args()
    torch = importlib.import_module(args.backend)  # `import torch`, or `import lucid as torch`
    result = train(torch, args.epochs, device=args.device, log=print)
    print(f"done with {args.backend}: validation loss {result['final']:.4f}")


if __name__ == "__main__":
    main()
