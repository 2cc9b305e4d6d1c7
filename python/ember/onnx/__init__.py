"""ember.onnx: importable so that scripts which import torch.onnx run; export is not available.

ONNX export needs a captured graph of the model, which ember does not build yet. `export` raises
NotImplementedError saying so; the query functions answer as PyTorch does outside an export.
"""

import enum

__all__ = ["export", "is_in_onnx_export", "TrainingMode", "OperatorExportTypes",
           "register_custom_op_symbolic", "unregister_custom_op_symbolic", "dynamo_export"]


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


_MESSAGE = ("ember.onnx.{}: ONNX export is not available in ember yet; it needs graph capture, "
            "which ember does not have. Save the weights with ember.save(model.state_dict(), "
            "path) and export from PyTorch if you need an ONNX file.")


def export(model, args, f, *unused_args, **unused_kwargs):
    """Not available: raises NotImplementedError."""
    raise NotImplementedError(_MESSAGE.format("export"))


def dynamo_export(model, *args, **kwargs):
    """Not available: raises NotImplementedError."""
    raise NotImplementedError(_MESSAGE.format("dynamo_export"))


def is_in_onnx_export():
    """False: ember never traces for ONNX."""
    return False


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Not available: raises NotImplementedError."""
    raise NotImplementedError(_MESSAGE.format("register_custom_op_symbolic"))


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Not available: raises NotImplementedError."""
    raise NotImplementedError(_MESSAGE.format("unregister_custom_op_symbolic"))
