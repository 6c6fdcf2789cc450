import torch


def sum_of_sines(*xs):
    return sum(x.sin() for x in xs)


def gated(a, b, scale=2.0):
    return torch.nn.functional.gelu(a) * b * scale


if __name__ == "__main__":
    a = torch.randn(4, 8)
    print(sum_of_sines(a, torch.rand(4, 8), a * 2))
    print(gated(a, torch.rand(4, 8)))
