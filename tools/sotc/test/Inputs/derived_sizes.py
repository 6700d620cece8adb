import torch


def shifted_loss(logits, labels):
    # A causal LM's loss: every position but the last predicts the next label (T - 1 of T).
    V = logits.shape[-1]
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, V),
                                             labels[:, 1:].reshape(-1))


def padded_labels(logits, labels):
    # transformers' ForCausalLMLoss: the labels padded by one (T + 1), then shifted (T).
    labels = torch.nn.functional.pad(labels, (0, 1), value=-100)
    V = logits.shape[-1]
    return torch.nn.functional.cross_entropy(logits.view(-1, V), labels[..., 1:].reshape(-1))


def differences(x):
    # T - 1 as a size: one derived size, however the program spells it.
    T = x.shape[1]
    return x[:, 1:] - x[:, :T - 1], x[:, 1:T].sum(1)


def decision(x):
    # A decision on T - 1 is a guard on T.
    T = x.shape[1]
    if T - 1 > 4:
        return x[:, 2:-2] * 2
    return x


def mismatch(x):
    # T - 1 positions against T.
    return x[:, 1:] + x


def halves(x):
    # T // 2 as a dimension: T is taken as a multiple of 2 (2*s1), T // 2 is s1.
    B, T, C = x.shape
    return torch.softmax(x.view(B, T // 2, 2 * C), -1)


def rows_of_four(x):
    # [?, 6] viewed as rows of 4: whole for even batches only.
    return x.view(-1, 4)


def halves_decided(x):
    # A decision on T where T is 2*s1: T > 9 is s1 > 4, T == 9 never holds.
    B, T, C = x.shape
    y = x.view(B, T // 2, 2 * C)
    if T == 9:
        return y
    if T > 9:
        return y * 2
    return y


def neighbours(x):
    # Four sizes in one kernel: x (T), x[:, 1:] (T - 1) sliced to T - 2, x[:, 2:] (T - 2).
    return x[:, 2:] + x[:, 1:][:, :-1]
