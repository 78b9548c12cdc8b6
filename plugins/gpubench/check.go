package gpubench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// checker collects what the decoded values break of the checks' rules,
// and puts a default back where a value breaks one.
type checker struct{ diags api.Diagnostics }

func (c *checker) errorf(path cty.Path, summary, format string, args ...any) {
	c.diags = append(c.diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: fmt.Sprintf(format, args...), Path: path})
}

// atLeast wants *v >= min, or def, the value that stands for "every"
// where one does.
func (c *checker) atLeast(path cty.Path, v *int, min, def int) {
	if *v < min && *v != def {
		c.errorf(path, "Value too small", "%s must be at least %d, not %d.", api.PathString(path), min, *v)
		*v = def
	}
}

// seconds wants *v >= 0.
func (c *checker) seconds(path cty.Path, v *float64, def float64) {
	if *v < 0 {
		c.errorf(path, "Value too small", "%s must be 0 or more seconds, not %g.", api.PathString(path), *v)
		*v = def
	}
}

// oneOf wants a list that names at least one of allowed and nothing else.
func (c *checker) oneOf(path cty.Path, v *[]string, allowed, def []string) {
	for _, s := range *v {
		if !slices.Contains(allowed, s) {
			c.errorf(path, "Unsupported value", "%s holds %q; the supported values are %s.", api.PathString(path), s, strings.Join(allowed, ", "))
			*v = def
			return
		}
	}
	if len(*v) == 0 {
		c.errorf(path, "Empty list", "%s must name at least one of %s.", api.PathString(path), strings.Join(allowed, ", "))
		*v = def
	}
}

func at(names ...string) cty.Path {
	var p cty.Path
	for _, n := range names {
		p = p.GetAttr(n)
	}
	return p
}

// checkConfig applies the rules of every check the body names.
func checkConfig(cfg Config) api.Diagnostics {
	var c checker
	if h := cfg.Health; h != nil {
		c.checkHealth(h, cfg.Hardware)
	}
	if g := cfg.GEMM; g != nil {
		c.checkGEMM(g)
	}
	if m := cfg.HBM; m != nil {
		c.checkCopies("hbm", &m.Warmup, &m.Iters, 3, 20)
		if m.Bytes < 64<<20 || m.Bytes%64 != 0 {
			c.errorf(at("hbm", "bytes"), "Invalid size", "bytes must be a multiple of 64 of at least 64 MiB, so that the copy runs past launch overhead and the caches; %d is not.", m.Bytes)
		}
	}
	if p := cfg.P2P; p != nil {
		c.checkCopies("p2p", &p.Warmup, &p.Iters, 3, 10)
		if p.Bytes < 1<<20 || p.Bytes%4 != 0 {
			c.errorf(at("p2p", "bytes"), "Invalid size", "bytes must be a multiple of 4 of at least 1 MiB; %d is not.", p.Bytes)
		}
	}
	if n := cfg.NCCL; n != nil {
		c.checkNCCL(n)
	}
	return c.diags
}

// checkHardware: a profile has a node or more.
func checkHardware(hw *Hardware) api.Diagnostics {
	var c checker
	c.atLeast(at("hardware", "nodes"), &hw.Nodes, 1, 1)
	c.atLeast(at("hardware", "gpus_per_node"), &hw.GPUsPerNode, 0, 0)
	return c.diags
}

func (c *checker) checkHealth(h *HealthConfig, hw Hardware) {
	c.atLeast(at("health", "expect", "gpus"), &h.GPUs, 1, hw.GPUsPerNode)
	if h.MaxUncorrectableECC < 0 {
		c.errorf(at("health", "expect", "max_uncorrectable_ecc"), "Value too small", "health.expect.max_uncorrectable_ecc must be at least 0, not %d.", h.MaxUncorrectableECC)
	}
	c.atLeast(at("health", "expect", "min_nvlinks"), &h.MinNVLinks, 0, -1)
	c.atLeast(at("health", "expect", "min_port_range"), &h.MinPortRange, 0, 16384)
}

func (c *checker) checkGEMM(g *GEMMConfig) {
	c.oneOf(at("gemm", "dtypes"), &g.DTypes, gemmDTypes, gemmDTypes)
	for _, s := range g.Sizes {
		if s <= 0 {
			c.errorf(at("gemm", "sizes"), "Not a whole number", "gemm.sizes must hold positive whole numbers.")
			break
		}
	}
	if len(g.Sizes) == 0 {
		c.errorf(at("gemm", "sizes"), "Not a list", "gemm.sizes must be a non-empty list of whole numbers.")
	}
	c.atLeast(at("gemm", "top_k"), &g.TopK, 1, 8)
	c.checkCopies("gemm", &g.Warmup, &g.Iters, 5, 50)
	c.atLeast(at("gemm", "repeats"), &g.Repeats, 1, 3)
	c.seconds(at("gemm", "warmup_s"), &g.WarmupSeconds, 0)
	c.seconds(at("gemm", "rest_s"), &g.RestSeconds, 1)
}

// checkCopies: warm-up runs 0 or more, timed runs 1 or more.
func (c *checker) checkCopies(block string, warmup, iters *int, defWarmup, defIters int) {
	c.atLeast(at(block, "warmup"), warmup, 0, defWarmup)
	c.atLeast(at(block, "iters"), iters, 1, defIters)
}

func (c *checker) checkNCCL(n *NCCLConfig) {
	ops := make([]string, len(n.Ops))
	for i, o := range n.Ops {
		ops[i] = string(o)
	}
	c.oneOf(at("nccl", "ops"), &ops, opNames(), []string{string(node.AllReduce)})
	n.Ops = make([]node.Op, len(ops))
	for i, o := range ops {
		n.Ops[i] = node.Op(o)
	}
	c.atLeast(at("nccl", "factor"), &n.Factor, 2, 4)
	c.checkCopies("nccl", &n.Warmup, &n.Iters, 5, 20)
	c.seconds(at("nccl", "min_batch_s"), &n.MinSeconds, 0.05)
	if node.ElemSize(n.DType) == 0 || n.DType == "tf32" || n.DType == "fp8" {
		c.errorf(at("nccl", "dtype"), "Unsupported dtype", "dtype must be bf16, fp16 or fp32, not %q.", n.DType)
	}
	if n.MinBytes < 1 || n.MaxBytes < n.MinBytes {
		c.errorf(at("nccl", "max_bytes"), "Invalid size range", "The sweep needs 1 <= min_bytes <= max_bytes; got %d and %d.", n.MinBytes, n.MaxBytes)
		n.MinBytes, n.MaxBytes = 1<<20, 1<<30
	}
	if n.MaxStragglerRatio < 1 {
		c.errorf(at("nccl", "expect", "max_straggler_ratio"), "Invalid straggler ratio", "max_straggler_ratio is a rank's time over the median of all ranks, so at least 1 (1.1 lets a rank be 10%% slower); got %g.", n.MaxStragglerRatio)
		n.MaxStragglerRatio = cluster.DefaultMaxStragglerRatio
	}
}
