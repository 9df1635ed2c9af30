"""The layers of :mod:`lucid.nn`, one family per file."""

from .activation import (
    ELU, GELU, Flatten, Hardtanh, Identity, LeakyReLU, LogSoftmax, Mish, ReLU, ReLU6, Sigmoid, SiLU, Softmax,
    Softplus, Softsign, Tanh, Unflatten,
)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .normalization import BatchNorm1d, Dropout, LayerNorm
# convolutions, pooling and their normalisation and dropout (issue 24)
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .normalization import BatchNorm2d, Dropout2d
from .padding import (
    CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d,
    ReplicationPad2d, ZeroPad1d, ZeroPad2d,
)
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .sparse import Embedding, EmbeddingBag
# attention and the Transformer (issue 24)
from .attention import MultiheadAttention
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)

__all__ = [
    "Linear", "Embedding", "EmbeddingBag", "Dropout", "LayerNorm", "BatchNorm1d",
    "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Mish", "Hardtanh", "Softplus", "Softsign", "Tanh",
    "Sigmoid", "Softmax", "LogSoftmax", "Identity", "Flatten", "Unflatten",
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
    # attention and the Transformer (issue 24)
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    # convolutions, pooling and their normalisation and dropout (issue 24)
    "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "BatchNorm2d", "Dropout2d",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d",
    "ConstantPad1d", "ConstantPad2d", "ZeroPad1d", "ZeroPad2d",
]
