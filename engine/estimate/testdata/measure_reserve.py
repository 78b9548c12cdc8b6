# Device memory a PyTorch process holds outside its tensors: CUDA context,
# cuBLAS workspace, then NCCL. Run on a GPU machine: python3 measure_reserve.py
# Measured on one H100 (PyTorch 2.11, NCCL 2.28.9): after_ctx=648871936
# after_gemm=718077952 after_nccl=1309474816.
import os, torch, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR","127.0.0.1"); os.environ.setdefault("MASTER_PORT","29511")
os.environ["NCCL_NVLS_ENABLE"]="0"
def used():
    free,total=torch.cuda.mem_get_info(); return total-free
torch.zeros(1,device="cuda"); torch.cuda.synchronize()
ctx=used()-torch.cuda.memory_reserved()
a=torch.randn(8192,8192,device="cuda",dtype=torch.bfloat16); b=a@a; torch.cuda.synchronize()
blas=used()-torch.cuda.memory_reserved()
dist.init_process_group("nccl",rank=0,world_size=1,device_id=torch.device("cuda:0"))
x=torch.ones(64<<20,device="cuda"); dist.all_reduce(x); torch.cuda.synchronize()
nccl=used()-torch.cuda.memory_reserved()
print(f"non_pytorch_bytes after_ctx={ctx} after_gemm={blas} after_nccl={nccl} GiB={nccl/2**30:.3f}")
print(torch.__version__, torch.cuda.get_device_name(), torch.cuda.nccl.version())
dist.destroy_process_group()
