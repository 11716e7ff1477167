# PyTorch's times for the softmax probe's task (eager and torch.compile), timed like the probe:
# one call between events after an L2 flush, median of 15.
import torch
x = torch.randn(4096, 65536, device="cuda")
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
f = lambda x: torch.softmax(x, dim=1)
def median_ms(fn):
    fn(); torch.cuda.synchronize()
    ts = []
    for i in range(15):
        flush.fill_(i)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[7]
c = torch.compile(f)
for _ in range(3): c(x)
print(f"torch eager   {median_ms(lambda: f(x)):.4f} ms")
print(f"torch.compile {median_ms(lambda: c(x)):.4f} ms")
