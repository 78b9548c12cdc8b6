# Activation bytes a plain bf16 Llama block keeps for backward.
# Run on a GPU machine: python3 measure_activations.py
# Measured on one H100 (PyTorch 2.11): b=1 45.57, b=2 44.57 bytes per s*b*h.
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
h,f,a,kv,s,L=2048,8192,32,8,4096,4
hd=h//a
class Block(nn.Module):
    def __init__(s_):
        super().__init__()
        s_.n1=nn.RMSNorm(h); s_.n2=nn.RMSNorm(h)
        s_.wq=nn.Linear(h,h,bias=False); s_.wk=nn.Linear(h,kv*hd,bias=False); s_.wv=nn.Linear(h,kv*hd,bias=False); s_.wo=nn.Linear(h,h,bias=False)
        s_.w1=nn.Linear(h,f,bias=False); s_.w3=nn.Linear(h,f,bias=False); s_.w2=nn.Linear(f,h,bias=False)
    def forward(s_,x):
        b,t,_=x.shape
        y=s_.n1(x)
        q=s_.wq(y).view(b,t,a,hd).transpose(1,2); k=s_.wk(y).view(b,t,kv,hd).transpose(1,2); v=s_.wv(y).view(b,t,kv,hd).transpose(1,2)
        o=F.scaled_dot_product_attention(q,k,v,is_causal=True,enable_gqa=True).transpose(1,2).reshape(b,t,h)
        x=x+s_.wo(o)
        y=s_.n2(x)
        return x+s_.w2(F.silu(s_.w1(y))*s_.w3(y))
m=nn.Sequential(*[Block() for _ in range(L)]).cuda().to(torch.bfloat16)
for b in (1,2):
    x=torch.randn(b,s,h,device="cuda",dtype=torch.bfloat16,requires_grad=True)
    torch.cuda.synchronize(); m0=torch.cuda.memory_allocated()
    out=m(x); torch.cuda.synchronize(); m1=torch.cuda.memory_allocated()
    per=(m1-m0-out.numel()*2)/L
    print(f"b={b} bytes/layer={per:.0f} per_sbh={per/(s*b*h):.2f}")
    out.sum().backward(); del out
