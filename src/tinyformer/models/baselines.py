"""Predictors to measure the book's models against.

- Count models (`ngram_table`, `ngram_probs`, `ngram_loss`): the next symbol's frequency after the
  last k symbols, counted in the training data. k = 0 is the unigram model, k = 1 the bigram
  model: the baselines the Part 1 character MLP has to beat on the held-out names.
- The two non-attention predictors of Part 3 section 17 (`window_concat_forward`,
  `prefix_mean_forward`), runnable so their costs can be counted.
- One layer of each older sequence model that section 16 sets beside attention
  (`rnn_layer_forward`, `causal_conv_forward`), runnable for the same reason.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..ops import matmul


def window_concat_forward(params: dict, ids, w: int, pad_id: int) -> np.ndarray:
    """Each position predicts from its last w token rows, concatenated (slots padded with pad_id)."""
    ids = np.asarray(ids, dtype=int)
    padded = np.concatenate([np.full(w - 1, pad_id), ids])  # (n + w - 1,)
    windows = np.stack([padded[i : i + w] for i in range(ids.size)])  # (n, w)
    rows = params["E_tok"][windows].reshape(ids.size, -1)  # (n, w*d) one slot after another
    logits, _ = nn.mlp_forward(rows, params["W1"], params["b1"], params["W2"], params["b2"])  # (n, C)
    return logits


def prefix_mean_forward(params: dict, ids) -> np.ndarray:
    """Each position predicts from the mean of the rows up to it: order and choice are lost."""
    ids = np.asarray(ids, dtype=int)
    E = params["E_tok"][ids] + params["P"][: ids.size]  # (n, d)
    means = np.cumsum(E, axis=0) / np.arange(1, ids.size + 1)[:, None]  # (n, d) running sums, O(nd)
    logits, _ = nn.mlp_forward(means, params["W1"], params["b1"], params["W2"], params["b2"])  # (n, C)
    return logits


def rnn_layer_forward(params: dict, X: np.ndarray) -> np.ndarray:
    """A recurrent layer, h_t = tanh(x_t W_x + h_(t-1) W_h + b): n steps, each waiting for the one before.

    Position t hears about position j only through the t - j updates between them.
    """
    h = np.zeros((1, params["W_h"].shape[0]))  # (1, d) the state before the first input
    states = []
    for t in range(X.shape[0]):  # sequential: step t needs the state of step t - 1
        h = np.tanh(matmul(X[t:t + 1], params["W_x"], "rnn") + matmul(h, params["W_h"], "rnn") + params["b"])
        states.append(h)
    return np.vstack(states)  # (n, d)


def causal_conv_forward(params: dict, X: np.ndarray) -> np.ndarray:
    """A causal temporal convolution: row t mixes rows t-k+1 .. t (zeros before the start) with one weight per slot.

    `params["W"]` is (k d, d_out): the k slots' weights stacked, oldest first, like the
    character MLP's concatenated window. All rows are computed at once, in parallel.
    """
    n, d = X.shape
    k = params["W"].shape[0] // d
    padded = np.vstack([np.zeros((k - 1, d)), X])  # (n + k - 1, d)
    windows = np.stack([padded[t:t + k].ravel() for t in range(n)])  # (n, k d), oldest slot first
    return matmul(windows, params["W"], "conv") + params["b"]  # (n, d_out)


def _context_index(contexts: np.ndarray, k: int, vocab_size: int) -> np.ndarray:
    """One number per window for its last k symbols (a base-`vocab_size` numeral); 0 when k = 0."""
    contexts = np.atleast_2d(np.asarray(contexts, dtype=np.int64))  # (N, w)
    if not 0 <= k <= contexts.shape[1]:
        raise ValueError(f"a count model of order {k} needs windows of at least {k} symbols")
    digits = vocab_size ** np.arange(k - 1, -1, -1)  # (k,)
    return contexts[:, contexts.shape[1] - k:] @ digits if k else np.zeros(len(contexts), dtype=np.int64)


def ngram_table(contexts, targets, k: int, vocab_size: int, alpha: float = 1.0) -> np.ndarray:
    """Next-symbol probabilities after each possible run of k symbols, from counts plus `alpha`.

    `contexts` (N, w) and `targets` (N,) are the model's training pairs; only the last k
    symbols of each window are used. Adding `alpha` to every count (Laplace's rule for
    alpha = 1) keeps a pair never seen in training from getting probability zero; a run of
    symbols with no counts at all gets the uniform row. Returns a (vocab_size**k, vocab_size)
    table whose rows sum to one.
    """
    counts = np.zeros((vocab_size ** k, vocab_size))
    np.add.at(counts, (_context_index(contexts, k, vocab_size), np.asarray(targets)), 1.0)
    counts += alpha
    counts[counts.sum(axis=1) == 0] = 1.0  # nothing seen and nothing added: no preference
    return counts / counts.sum(axis=1, keepdims=True)


def ngram_probs(table: np.ndarray, contexts, k: int) -> np.ndarray:
    """The (N, vocab) next-symbol distributions a count table gives a batch of windows."""
    return table[_context_index(contexts, k, table.shape[1])]


def ngram_loss(table: np.ndarray, contexts, targets, k: int) -> float:
    """Mean -log p(observed next symbol) under a count table: comparable with the models' losses."""
    rows = _context_index(contexts, k, table.shape[1])
    return float(-np.log(table[rows, np.asarray(targets)]).mean())
