# sotc-trace: fn x=float32[2,64]
"""A spectrogram and its inverse (torchaudio's HDemucs): torch.stft as the signal's frames
times a windowed Fourier bank (a GEMM), the complex spectrum as (real, imaginary) pairs, and
torch.istft as the inverse bank times the spectrum, the frames added where they overlap."""
import torch


def fn(x):
    window = torch.hann_window(16)
    z = torch.stft(x, 16, 4, window=window, center=True, return_complex=True)
    y = torch.istft(z * 0.5, 16, 4, window=window, length=x.shape[-1])
    return torch.view_as_real(z), y
