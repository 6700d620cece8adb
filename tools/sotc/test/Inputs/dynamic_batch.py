import torch


def heads(x):
    # nanoGPT's split of q, k and v: the batch behind the 3.
    B, T, C = x.shape
    qkv = x.reshape(B, T, 3, 2, C // 6).permute(2, 0, 3, 1, 4)
    return qkv[0] * qkv[1]


def segments(m):
    # transformers' packed-sequence mask: each batch row indexed by its own coordinate.
    b = torch.arange(m.shape[0])[:, None, None]
    q = torch.arange(6)[None, :, None]
    k = torch.arange(6)[None, None, :]
    return m[b, q] == m[b, k]


def conv1d(x, w, b):
    # transformers' Conv1D (GPT-2): the batch flattened with the tokens around a GEMM.
    size_out = x.size()[:-1] + (w.shape[1],)
    x = torch.addmm(b, x.view(-1, x.size(-1)), w)
    return torch.nn.functional.gelu(x.view(size_out))


def gathered(x, i):
    # torch.gather along the tokens of a batch-first table (RoBERTa's token types).
    return torch.gather(x, 1, i)
