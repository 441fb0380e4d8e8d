"""The book's layers, each a forward/backward pair; see docs/reference/engine.md."""

from .activations import relu_backward, relu_forward
from .attention import (attention_backward, attention_forward, head_backward, head_forward,
                        tiled_attention_forward)
from .embedding import ContextLimitError, embedding_backward, embedding_forward, positions_forward
from .ffn import ffn_backward, ffn_forward, mlp_backward, mlp_forward
from .layernorm import layernorm_backward, layernorm_forward
from .linear import linear_backward, linear_forward, readout_backward, readout_forward
from .loss import cross_entropy_backward, cross_entropy_forward
from .masks import (causal_mask, full_mask, hops, local_mask, padding_mask, segment_causal_mask,
                    segment_positions)
from .multihead import multihead_backward, multihead_forward
from .optim import AdamState, adam_step, sgd_step
from .softmax import softmax, softmax_backward

__all__ = [
    "AdamState", "ContextLimitError", "adam_step", "full_mask", "hops", "local_mask",
    "segment_causal_mask", "segment_positions",
    "attention_backward", "attention_forward", "causal_mask", "cross_entropy_backward",
    "cross_entropy_forward", "embedding_backward", "embedding_forward", "ffn_backward", "ffn_forward",
    "head_backward", "head_forward", "layernorm_backward", "layernorm_forward", "linear_backward",
    "linear_forward", "mlp_backward", "mlp_forward", "multihead_backward", "multihead_forward",
    "padding_mask", "positions_forward", "readout_backward", "readout_forward", "relu_backward",
    "relu_forward", "sgd_step", "softmax", "softmax_backward", "tiled_attention_forward",
]
