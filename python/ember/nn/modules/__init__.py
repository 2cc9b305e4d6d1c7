"""The layers of ember.nn (torch.nn.modules)."""

from ember.nn.modules.module import Module
from ember.nn.modules.linear import Bilinear, Identity, Linear
from ember.nn.modules.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                                   ConvTranspose3d)
from ember.nn.modules.activation import (
    CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
    LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax, Softmax2d,
    Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold, MultiheadAttention)
from ember.nn.modules.loss import (
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss, GaussianNLLLoss,
    HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss,
    MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, NLLLoss2d,
    PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
    TripletMarginWithDistanceLoss)
from ember.nn.modules.container import (Container, ModuleDict, ModuleList, ParameterDict,
                                        ParameterList, Sequential)
from ember.nn.modules.pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d,
    MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from ember.nn.modules.flatten import Flatten, Unflatten
from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance
from ember.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from ember.nn.modules.channelshuffle import ChannelShuffle
from ember.nn.modules.fold import Fold, Unfold

from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ember.nn.modules.sync_batchnorm import SyncBatchNorm
from ember.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ember.nn.modules.normalization import GroupNorm, LayerNorm, LocalResponseNorm
from ember.nn.modules.dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                                      FeatureAlphaDropout)
from ember.nn.modules.sparse import Embedding, EmbeddingBag
from ember.nn.modules.padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d,
                                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                                      ZeroPad2d)
from ember.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from ember.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from ember.nn.modules.fractional_pool import FractionalMaxPool2d, FractionalMaxPool3d
from ember.nn.modules.transformer import (Transformer, TransformerDecoder,
                                          TransformerDecoderLayer, TransformerEncoder,
                                          TransformerEncoderLayer)

__all__ = [
    "Module", "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6",
    "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU",
    "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU",
    "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax", "L1Loss",
    "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss",
    "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
    "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss",
    "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss",
    "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss", "Container", "Sequential",
    "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d",
    "Flatten", "Unflatten", "PairwiseDistance", "CosineSimilarity", "PixelShuffle",
    "PixelUnshuffle", "ChannelShuffle", "Fold", "Unfold", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "GroupNorm", "LayerNorm",
    "LocalResponseNorm", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "FeatureAlphaDropout", "Embedding", "EmbeddingBag", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "ZeroPad2d", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "MultiheadAttention", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase",
    "RNNCell",
    "LSTMCell", "GRUCell", "Transformer", "TransformerEncoder", "TransformerDecoder",
    "TransformerEncoderLayer", "TransformerDecoderLayer",
]
