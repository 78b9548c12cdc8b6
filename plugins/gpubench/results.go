package gpubench

import (
	"github.com/gpuflow/gpuflow/plugins/gpubench/cluster"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
	"github.com/gpuflow/gpuflow/plugins/gpubench/preflight"
)

// ResultsFormatVersion is the version of the results JSON layout; it
// changes whenever a key changes meaning or goes away.
const ResultsFormatVersion = 1

// Results is everything one run measured: the results file's content and
// the stage's outputs. Units are SI and named in each key.
type Results struct {
	FormatVersion int                  `json:"format_version"`
	Passed        bool                 `json:"passed"`
	DurationS     float64              `json:"duration_s"`
	GPUs          []node.GPU           `json:"gpus"`
	Versions      node.Versions        `json:"versions"`
	Checks        []Verdict            `json:"checks"`
	Health        []node.Health        `json:"health,omitempty"`
	Affinity      []preflight.Affinity `json:"affinity,omitempty"`
	Preflight     []preflight.Finding  `json:"preflight,omitempty"`
	GEMM          []GEMMRow            `json:"gemm,omitempty"`
	GEMMSpread    []GEMMSpread         `json:"gemm_spread,omitempty"`
	HBM           []HBMRow             `json:"hbm,omitempty"`
	P2P           []P2PRow             `json:"p2p,omitempty"`
	NCCL          []NCCLRow            `json:"nccl,omitempty"`
	// Job is set in a job of several nodes; NCCL rows then span them all.
	Job *JobPlace `json:"job,omitempty"`
	// Stragglers are the ranks node 0 found slower than the median.
	Stragglers []cluster.Straggler `json:"nccl_stragglers,omitempty"`
}

// JobPlace is this node's place in a job of several nodes.
type JobPlace struct {
	NodeRank int `json:"node_rank"`
	Nodes    int `json:"nodes"`
}

// Verdict is one check's outcome.
type Verdict struct {
	Check  string `json:"check"`
	Passed bool   `json:"passed"`
	// Skipped says why the check did not run (one GPU for p2p).
	Skipped string `json:"skipped,omitempty"`
	// Failures lists each missed threshold or error, one sentence each.
	Failures []string `json:"failures,omitempty"`
}

// GEMMRow is one GPU's product at one dtype and size.
type GEMMRow struct {
	DType      string  `json:"dtype"`
	M          int     `json:"m"`
	N          int     `json:"n"`
	K          int     `json:"k"`
	GPU        int     `json:"gpu"`
	TFLOPS     float64 `json:"tflops"`
	TimeS      float64 `json:"time_s"`
	RelErr     float64 `json:"rel_err"`
	Candidates int     `json:"candidates"`
	Best       int     `json:"best_candidate"`
}

// GEMMSpread compares the slowest GPU with the node median.
type GEMMSpread struct {
	DType         string  `json:"dtype"`
	Size          int     `json:"size"`
	MedianTFLOPS  float64 `json:"median_tflops"`
	SlowestGPU    int     `json:"slowest_gpu"`
	SlowestTFLOPS float64 `json:"slowest_tflops"`
	// SlowestVsMedian is 1 - slowest/median: 0.03 means 3% behind.
	SlowestVsMedian float64 `json:"slowest_vs_median"`
}

// HBMRow is one GPU's memory bandwidth.
type HBMRow struct {
	GPU        int     `json:"gpu"`
	CopyBytes  int64   `json:"copy_bytes"`
	CopyTBps   float64 `json:"copy_tbps"`
	TriadBytes int64   `json:"triad_array_bytes"`
	TriadTBps  float64 `json:"triad_tbps"`
	Wrong      int64   `json:"wrong"`
}

// P2PRow is one ordered GPU pair.
type P2PRow struct {
	Src        int     `json:"src"`
	Dst        int     `json:"dst"`
	Bytes      int64   `json:"bytes"`
	PeerAccess bool    `json:"peer_access"`
	OneWayGBps float64 `json:"one_way_gbps"`
	// BidirGBps is both directions together, set on src < dst.
	BidirGBps float64 `json:"bidir_gbps,omitempty"`
	Wrong     int64   `json:"wrong"`
}

// NCCLRow is one collective at one size, as nccl-tests reports it.
type NCCLRow struct {
	Op        node.Op `json:"op"`
	DType     string  `json:"dtype"`
	Bytes     int64   `json:"bytes"`
	Count     int64   `json:"count"`
	InPlace   bool    `json:"in_place"`
	Ranks     int     `json:"ranks"`
	Iters     int     `json:"iters"`
	TimeS     float64 `json:"time_s"`
	AlgBWGBps float64 `json:"algbw_gbps"`
	BusBWGBps float64 `json:"busbw_gbps"`
	Wrong     int64   `json:"wrong"`
}
