import torch


def scale(x):
    # One named size, B: compiled as `?` is.
    return torch.relu(x) * 2


def attention(x, mask):
    # A batch B and a sequence T, both dynamic: the heads split between them, a static mask
    # sliced to T x T, a mean over T.
    B, T, C = x.shape
    q = x.reshape(B, T, 2, C // 2).transpose(1, 2)
    s = (q @ q.transpose(-1, -2)).masked_fill(mask[:T, :T] == 0, float("-inf"))
    y = (torch.softmax(s, -1) @ q).transpose(1, 2).reshape(B, T, C)
    return y.mean(1)


def add(x, y):
    # Two sizes that meet: a broadcast of B against N.
    return x + y


def compare(x, y):
    # A decision between two sizes.
    if x.shape[0] == y.shape[0]:
        return x
    return x * 2


def order(x, y):
    # An order between two sizes.
    if x.shape[0] < y.shape[0]:
        return x
    return y


def project(x, w):
    # Rows of a batch and a sequence through a GEMM (its rows B * T) and back as [B, T, 4].
    B, T, C = x.shape
    return torch.relu(x @ w).reshape(B, T, 4) * 2


def tokens(x, w):
    # GPT-2's Conv1D: every sequence's tokens as the rows of one GEMM (x.view(-1, C): B * T
    # rows), viewed back as [B, T, 6]; the merged rows returned as well.
    h = torch.addmm(torch.zeros(w.shape[1]), x.view(-1, x.size(-1)), w)
    return h.view(x.size()[:-1] + (w.shape[1],)), h.exp()


def gram(x):
    # A product that contracts every token of every sequence (k = B * T).
    h = x.view(-1, x.size(-1))
    return h.t() @ h


def product_decision(x):
    # A decision on a product of sizes: guards read one size.
    B, T, C = x.shape
    if B * T > 64:
        return x
    return x * 2


def fourth_token(x):
    # A static position past the first among merged rows: no guard reads a product.
    return x.view(-1, x.shape[-1])[3]
