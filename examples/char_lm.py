"""A character-level Transformer language model on the fortune files, as examples/char_lm.cpp.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/char_lm.py [--backend ember|torch]
        [--steps 800] [--seed 0] [--layers 4] [--d-model 128] [--heads 4] [--context 64]
        [--batch-size 32] [--lr 4e-3] [--warmup 60] [--weight-decay 0.1] [--clip 1.0]
        [--amp bf16] [--tie] [--eval-every 100] [--eval-batches 8] [--threads N]
        [--prompt TEXT] [--sample-chars 300] [--temperature 0.8] [--top-k 40] [--out DIR]
        [--init CHECKPOINT]

A decoder-only Transformer (token and position embeddings; blocks of pre-LayerNorm causal
self-attention through scaled_dot_product_attention and a GELU MLP; a final LayerNorm; a head
tied to the token embedding with --tie) learns to predict the next character of the text of
Debian's `fortunes` package. Each plain fortune file is split once: its first 90% of characters
go to training, the rest to validation. Training is AdamW (weight decay on matrices and
embeddings only) with linear warmup and a cosine decay to lr/10, gradients clipped to --clip.

The script is written against PyTorch's API: `--backend ember` (the default) runs it with
`import ember as torch`, `--backend torch` with PyTorch (1.13 has no
F.scaled_dot_product_attention; its F._scaled_dot_product_attention computes the same thing).
The weights are drawn from NumPy's generator seeded with --seed and the batches from another, so
both backends start from the same parameters and see the same batches: their losses differ
only by rounding. --amp bf16 runs forward and loss under CPU autocast with bfloat16.

At the end it writes a checkpoint (the parameters under "model.", the vocabulary's code points
under "vocab", the sizes under "config"), loads it back into a fresh model and checks that the
outputs are identical, then samples --sample-chars characters after --prompt.
"""

import argparse
import math
import os
import sys
import time

import numpy as np

FORTUNES = "/usr/share/games/fortunes"
VAL_FRACTION = 0.1


def read_corpus(root=FORTUNES):
    """(train text, validation text): each plain file in name order split 90/10."""
    names = sorted(n for n in os.listdir(root)
                   if not n.endswith((".dat", ".u8")) and not n.startswith(".")
                   and os.path.isfile(os.path.join(root, n))
                   and not os.path.islink(os.path.join(root, n)))
    if not names:
        raise RuntimeError(f"no fortune files in {root} (install Debian's fortunes package)")
    train, val = [], []
    for n in names:
        with open(os.path.join(root, n), encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
        cut = len(text) - int(len(text) * VAL_FRACTION)
        train.append(text[:cut])
        val.append(text[cut:])
    return "".join(train), "".join(val)


class Vocab:
    """The characters of a text, sorted by code point."""

    def __init__(self, chars):
        self.chars = sorted(set(chars))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        # Characters outside the vocabulary map to the first one (a newline in the fortunes).
        return np.array([self.index.get(c, 0) for c in text], dtype=np.int64)

    def decode(self, ids):
        return "".join(self.chars[int(i)] for i in ids)


def make_model(torch, vocab_size, context, d_model, heads, layers, tie):
    nn, F = torch.nn, torch.nn.functional
    if hasattr(F, "scaled_dot_product_attention"):
        def causal_attention(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:  # PyTorch 1.13: (output, weights)
        def causal_attention(q, k, v):
            return F._scaled_dot_product_attention(q, k, v, is_causal=True)[0]

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(c, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = causal_attention(q, k, v)
            return self.proj(y.transpose(1, 2).reshape(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d_model)
            self.attn = SelfAttention()
            self.ln2 = nn.LayerNorm(d_model)
            self.fc = nn.Linear(d_model, 4 * d_model)
            self.fc_proj = nn.Linear(4 * d_model, d_model)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.fc_proj(F.gelu(self.fc(self.ln2(x))))

    class CharLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Embedding(vocab_size, d_model)
            self.pos_emb = nn.Embedding(context, d_model)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d_model)
            if not tie:
                self.head = nn.Linear(d_model, vocab_size, bias=False)

        def forward(self, idx):
            t = idx.shape[1]
            pos = torch.arange(t, dtype=torch.long)
            x = self.tok_emb(idx) + self.pos_emb(pos)
            for block in self.blocks:
                x = block(x)
            x = self.ln_f(x)
            return F.linear(x, self.tok_emb.weight) if tie else self.head(x)

    return CharLM()


def init_weights(torch, model, seed, layers):
    """GPT-2's initialisation drawn from NumPy: N(0, 0.02) matrices and embeddings (the residual
    projections N(0, 0.02/sqrt(2 layers))), zero biases, unit LayerNorm weights."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if name.endswith("bias"):
                a = np.zeros(shape)
            elif ".ln" in name or name.startswith("ln_"):
                a = np.ones(shape)
            else:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02
                a = rng.normal(0.0, std, size=shape)
            p.copy_(torch.from_numpy(a.astype(np.float32)))


def batch(torch, data, starts, context):
    """Inputs and next-character targets of the windows starting at `starts`."""
    w = data[np.asarray(starts)[:, None] + np.arange(context + 1)]
    return torch.from_numpy(w[:, :-1].copy()), torch.from_numpy(w[:, 1:].copy())


def lr_at(step, args):
    """Linear warmup to --lr over --warmup steps, then a cosine decay to lr/10 at --steps."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0))))


def autocast(torch, args):
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.amp == "bf16")


def evaluate(torch, model, data, args):
    """Mean cross-entropy (nats per character) over --eval-batches batches of windows spread
    evenly over `data` (the same windows every time)."""
    n = args.eval_batches * args.batch_size
    starts = np.linspace(0, len(data) - args.context - 2, n).astype(np.int64)
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, n, args.batch_size):
            x, y = batch(torch, data, starts[i:i + args.batch_size], args.context)
            with autocast(torch, args):
                logits = model(x)
            total += float(torch.nn.functional.cross_entropy(
                logits.float().view(-1, logits.shape[-1]), y.view(-1)))
    model.train()
    return total / args.eval_batches


def sample(torch, model, vocab, args):
    """--prompt followed by --sample-chars characters drawn at --temperature from the --top-k
    most likely (NumPy's generator seeded with --seed picks them)."""
    rng = np.random.default_rng(args.seed + 1)
    ids = list(vocab.encode(args.prompt)) or [0]
    model.eval()
    with torch.no_grad():
        for _ in range(args.sample_chars):
            x = torch.tensor([ids[-args.context:]], dtype=torch.long)
            with autocast(torch, args):
                logits = model(x)
            z = logits[0, -1].float().numpy().astype(np.float64) / max(args.temperature, 1e-6)
            if 0 < args.top_k < len(z):
                z[z < np.sort(z)[-args.top_k]] = -np.inf
            p = np.exp(z - z.max())
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    model.train()
    return vocab.decode(ids)


def save_checkpoint(torch, model, vocab, args, path):
    ckpt = {"model." + k: v for k, v in model.state_dict().items()}
    ckpt["vocab"] = torch.tensor([ord(c) for c in vocab.chars], dtype=torch.long)
    ckpt["config"] = torch.tensor([len(vocab), args.context, args.d_model, args.heads,
                                   args.layers, int(args.tie)], dtype=torch.long)
    torch.save(ckpt, path)


def load_checkpoint(torch, path):
    """(model, vocab) rebuilt from a checkpoint written by save_checkpoint."""
    ckpt = torch.load(path)
    v, t, d, h, n, tie = (int(c) for c in ckpt["config"])
    vocab = Vocab(chr(int(c)) for c in ckpt["vocab"])
    model = make_model(torch, v, t, d, h, n, bool(tie))
    model.load_state_dict({k[6:]: w for k, w in ckpt.items() if k.startswith("model.")})
    return model, vocab


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backend", choices=["ember", "torch"], default="ember")
    p.add_argument("--steps", type=int, default=800)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=4e-3)
    p.add_argument("--warmup", type=int, default=60)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--amp", choices=["none", "bf16"], default="none")
    p.add_argument("--tie", action="store_true", help="the head shares the token embedding")
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--eval-batches", type=int, default=8)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--prompt", default="The ")
    p.add_argument("--sample-chars", type=int, default=300)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=40)
    p.add_argument("--out", default="char_lm_out")
    p.add_argument("--init", default="", help="start from this checkpoint's parameters")
    p.add_argument("--data", default=FORTUNES)
    args = p.parse_args(argv)
    if args.d_model % args.heads:
        p.error("--d-model must be a multiple of --heads")
    if min(args.layers, args.d_model, args.heads, args.context, args.batch_size,
           args.eval_batches) <= 0 or args.steps < 0 or args.warmup < 0 or args.lr <= 0:
        p.error("sizes, --eval-batches and --lr must be > 0; --steps and --warmup >= 0")
    return args


def main(argv=None):
    args = parse(argv)
    if args.backend == "torch":
        import torch
    else:
        import ember as torch
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    train_text, val_text = read_corpus(args.data)
    vocab = Vocab(train_text + val_text)
    train_ids, val_ids = vocab.encode(train_text), vocab.encode(val_text)
    model = make_model(torch, len(vocab), args.context, args.d_model, args.heads, args.layers,
                       args.tie)
    if args.init:
        init, _ = load_checkpoint(torch, args.init)
        model.load_state_dict(init.state_dict())
    else:
        init_weights(torch, model, args.seed, args.layers)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.backend} | char-level Transformer LM | {args.layers} layers, d {args.d_model}, "
          f"{args.heads} heads, context {args.context}, {n_params} parameters | vocab "
          f"{len(vocab)} | {len(train_ids)} training, {len(val_ids)} validation characters | "
          f"amp {args.amp} | threads {torch.get_num_threads()}", flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.99))
    rng = np.random.default_rng(args.seed + 12345)
    tty = sys.stderr.isatty()
    loss_sum, loss_n, train_secs, tokens = 0.0, 0, 0.0, 0
    history = []
    val = evaluate(torch, model, val_ids, args)
    print(f"step 0: val loss {val:.4f}", flush=True)
    history.append((0, float("nan"), val))
    start = last_draw = time.perf_counter()
    for step in range(args.steps):
        t0 = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args)
        starts = rng.integers(0, len(train_ids) - args.context - 1, size=args.batch_size)
        x, y = batch(torch, train_ids, starts, args.context)
        with autocast(torch, args):
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]),
                                                     y.view(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        loss_sum += float(loss)
        loss_n += 1
        tokens += x.numel()
        train_secs += time.perf_counter() - t0
        now = time.perf_counter()
        if tty and (now - last_draw > 0.1 or step + 1 == args.steps):
            last_draw = now
            done = int(30 * (step + 1) / args.steps)
            print(f"\rstep {step + 1}/{args.steps} [{'#' * done}{'.' * (30 - done)}] loss "
                  f"{loss_sum / loss_n:.4f} {tokens / train_secs:.0f} tok/s ", end="",
                  file=sys.stderr)
            if step + 1 == args.steps:
                print(file=sys.stderr)
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            val = evaluate(torch, model, val_ids, args)
            train_loss = loss_sum / loss_n
            history.append((step + 1, train_loss, val))
            if tty:
                print("\r" + " " * 79 + "\r", end="", file=sys.stderr)
            print(f"step {step + 1}: train loss {train_loss:.4f} | val loss {val:.4f} | lr "
                  f"{lr_at(step, args):.2e} | {tokens / train_secs:.0f} tokens/s", flush=True)
            loss_sum, loss_n = 0.0, 0
    total = time.perf_counter() - start
    if args.steps:
        print(f"trained {args.steps} steps in {total:.1f} s ({train_secs:.1f} s in steps): "
              f"{tokens / train_secs:.0f} tokens/s")

    os.makedirs(args.out, exist_ok=True)
    ext = "safetensors" if args.backend == "ember" else "pt"
    path = os.path.join(args.out, f"char_lm_py.{ext}")
    save_checkpoint(torch, model, vocab, args, path)
    loaded, loaded_vocab = load_checkpoint(torch, path)
    x, _ = batch(torch, val_ids, np.array([0, len(val_ids) // 2]), args.context)
    model.eval(), loaded.eval()
    with torch.no_grad():
        diff = float((model(x) - loaded(x)).abs().max())
    model.train()
    ok = diff == 0 and loaded_vocab.chars == vocab.chars
    print(f"wrote {path}; loaded back: max |logit difference| {diff:g} "
          f"({'identical' if ok else 'MISMATCH'})")
    text = sample(torch, model, vocab, args)
    print(f"sample (temperature {args.temperature}, top-k {args.top_k}):\n{text}")
    if not ok:
        raise SystemExit("char_lm: the checkpoint did not load back identically")
    return {"history": history, "tokens_per_s": tokens / train_secs if train_secs else 0.0,
            "sample": text, "model": model, "vocab": vocab}


if __name__ == "__main__":
    main()
