"""ember.masked: reductions and normalizations that ignore masked-out elements (torch.masked)."""
