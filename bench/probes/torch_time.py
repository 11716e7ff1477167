# PyTorch's times (eager and torch.compile) for a probe's task, timed like the probes: one call
# between events after an L2 flush, median of 15. Usage: python3 torch_time.py rmsnorm|softmax
import sys
import torch

TASKS = {
    # rownorm_probe.cu: RMSNorm over the channels of NCHW.
    "rmsnorm": ((16, 64, 256, 256),
                lambda x: x / torch.sqrt(torch.mean(x * x, dim=1, keepdim=True) + 1e-5)),
    # softmax_probe.cu: softmax over rows of 65536.
    "softmax": ((4096, 65536), lambda x: torch.softmax(x, dim=1)),
}

shape, f = TASKS[sys.argv[1]]
x = torch.randn(*shape, device="cuda")
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def median_ms(fn):
    fn()
    torch.cuda.synchronize()
    ts = []
    for i in range(15):
        flush.fill_(i)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[7]


c = torch.compile(f)
for _ in range(3):
    c(x)
print(f"torch eager   {median_ms(lambda: f(x)):.4f} ms")
print(f"torch.compile {median_ms(lambda: c(x)):.4f} ms")
