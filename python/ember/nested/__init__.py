"""ember.nested: nested (ragged) tensors, PyTorch 1.13's torch.nested prototype."""
