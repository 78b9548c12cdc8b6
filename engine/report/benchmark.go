package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// benchResults is the part of the benchmark plugin's results output the
// report draws. It is decoded here rather than imported, since the engine
// never imports a plugin; the keys are the plugin's documented format.
type benchResults struct {
	Checks []struct {
		Check    string   `json:"check"`
		Passed   bool     `json:"passed"`
		Skipped  string   `json:"skipped"`
		Failures []string `json:"failures"`
	} `json:"checks"`
	GEMM []struct {
		DType  string  `json:"dtype"`
		M      int     `json:"m"`
		GPU    int     `json:"gpu"`
		TFLOPS float64 `json:"tflops"`
	} `json:"gemm"`
	HBM []struct {
		GPU       int     `json:"gpu"`
		CopyTBps  float64 `json:"copy_tbps"`
		TriadTBps float64 `json:"triad_tbps"`
	} `json:"hbm"`
	P2P []struct {
		Src        int     `json:"src"`
		Dst        int     `json:"dst"`
		OneWayGBps float64 `json:"one_way_gbps"`
	} `json:"p2p"`
	NCCL []ncclRow `json:"nccl"`
}

// ncclRow is one collective at one message size.
type ncclRow struct {
	Op        string  `json:"op"`
	Bytes     float64 `json:"bytes"`
	InPlace   bool    `json:"in_place"`
	AlgBWGBps float64 `json:"algbw_gbps"`
	BusBWGBps float64 `json:"busbw_gbps"`
}

// benchConfig is the part of the stage's configuration the report sets
// the results against: the datasheet and the thresholds.
type benchConfig struct {
	Hardware struct {
		TFLOPS       map[string]float64 `json:"tflops"`
		HBMBytesPerS float64            `json:"hbm_bytes_per_s"`
	} `json:"hardware"`
	Checks map[string]json.RawMessage `json:"-"`
}

// benchmark draws bandwidth per message size, GEMM and HBM against the
// datasheet, the P2P matrix, and every check against its thresholds.
func (in stageInput) benchmark(sec *Section) error {
	var res benchResults
	if !output(in.stage, "results", &res) {
		sec.Notes = append(sec.Notes, "The run recorded no results output.")
		return nil
	}
	var cfg benchConfig
	if len(in.stage.Config) > 0 {
		if err := json.Unmarshal(in.stage.Config, &cfg); err != nil {
			return fmt.Errorf("its recorded configuration: %w", err)
		}
		if err := json.Unmarshal(in.stage.Config, &cfg.Checks); err != nil {
			return fmt.Errorf("its recorded configuration: %w", err)
		}
	}
	if f, note, ok := ncclFigure(res); ok {
		sec.Figures = append(sec.Figures, f)
		if note != "" {
			sec.Notes = append(sec.Notes, note)
		}
	}
	if f, ok := gemmFigure(res, cfg); ok {
		sec.Figures = append(sec.Figures, f)
	}
	if f, ok := hbmFigure(res, cfg); ok {
		sec.Figures = append(sec.Figures, f)
	}
	if f, ok := p2pFigure(res); ok {
		sec.Figures = append(sec.Figures, f)
	}
	sec.Tables = append(sec.Tables, checksTable(res, cfg))
	return nil
}

// ncclFigure plots bus bandwidth against message size per collective. With
// one rank no byte crosses a bus, so bus bandwidth is zero by definition;
// the figure then shows algorithm bandwidth and says so.
func ncclFigure(res benchResults) (Figure, string, bool) {
	if len(res.NCCL) == 0 {
		return Figure{}, "", false
	}
	bus := slices.ContainsFunc(res.NCCL, func(r ncclRow) bool { return r.BusBWGBps > 0 })
	f := Figure{Title: "NCCL bus bandwidth by message size", XLabel: "message size", YLabel: "bus bandwidth (GB/s)", LogX: true, XBytes: true}
	note := ""
	if !bus {
		f.Title, f.YLabel = "NCCL algorithm bandwidth by message size", "algorithm bandwidth (GB/s)"
		note = "One rank: no byte crosses a bus, so bus bandwidth is zero and the NCCL chart shows algorithm bandwidth."
	}
	index := map[string]int{}
	for _, r := range res.NCCL {
		name := r.Op + " out of place"
		if r.InPlace {
			name = r.Op + " in place"
		}
		i, ok := index[name]
		if !ok {
			i = len(f.Series)
			index[name] = i
			f.Series = append(f.Series, Series{Name: name})
		}
		y := r.BusBWGBps
		if !bus {
			y = r.AlgBWGBps
		}
		f.Series[i].X, f.Series[i].Y = append(f.Series[i].X, r.Bytes), append(f.Series[i].Y, y)
	}
	return f, note, true
}

// gemmFigure sets each GPU's GEMM TFLOP/s beside the datasheet's dense peak.
func gemmFigure(res benchResults, cfg benchConfig) (Figure, bool) {
	if len(res.GEMM) == 0 {
		return Figure{}, false
	}
	f := Figure{Title: "GEMM TFLOP/s per GPU against the datasheet", YLabel: "TFLOP/s", Kind: Bars,
		Series: []Series{{Name: "measured"}, {Name: "datasheet"}}}
	for _, r := range res.GEMM {
		f.Labels = append(f.Labels, fmt.Sprintf("%s %d³ gpu %d", r.DType, r.M, r.GPU))
		f.Series[0].Y = append(f.Series[0].Y, r.TFLOPS)
		f.Series[1].Y = append(f.Series[1].Y, cfg.Hardware.TFLOPS[r.DType])
	}
	return f, true
}

// hbmFigure sets each GPU's copy and triad bandwidth beside the datasheet.
func hbmFigure(res benchResults, cfg benchConfig) (Figure, bool) {
	if len(res.HBM) == 0 {
		return Figure{}, false
	}
	f := Figure{Title: "HBM bandwidth per GPU", YLabel: "TB/s", Kind: Bars,
		Series: []Series{{Name: "copy"}, {Name: "triad"}}}
	for _, r := range res.HBM {
		f.Labels = append(f.Labels, fmt.Sprintf("gpu %d", r.GPU))
		f.Series[0].Y = append(f.Series[0].Y, r.CopyTBps)
		f.Series[1].Y = append(f.Series[1].Y, r.TriadTBps)
	}
	if cfg.Hardware.HBMBytesPerS > 0 {
		f.Refs = []Ref{{Name: "datasheet", Y: cfg.Hardware.HBMBytesPerS / 1e12}}
	}
	return f, true
}

// p2pFigure is the one-way copy bandwidth of every ordered GPU pair.
func p2pFigure(res benchResults) (Figure, bool) {
	n := 0
	for _, r := range res.P2P {
		n = max(n, r.Src+1, r.Dst+1)
	}
	if n == 0 {
		return Figure{}, false
	}
	f := Figure{Title: "P2P one-way bandwidth (GB/s), row copies to column", Kind: Heat, Matrix: make([][]float64, n)}
	for i := range n {
		f.Labels = append(f.Labels, fmt.Sprintf("gpu %d", i))
		f.Matrix[i] = make([]float64, n)
	}
	for _, r := range res.P2P {
		f.Matrix[r.Src][r.Dst] = r.OneWayGBps
	}
	return f, true
}

// checksTable lists every check, its outcome and the thresholds it was held to.
func checksTable(res benchResults, cfg benchConfig) Table {
	t := Table{Title: "Checks", Header: []string{"check", "result", "thresholds", "detail"}}
	for _, c := range res.Checks {
		result := "failed"
		switch {
		case c.Skipped != "":
			result = "skipped"
		case c.Passed:
			result = "passed"
		}
		detail := c.Skipped
		if len(c.Failures) > 0 {
			detail = strings.Join(c.Failures, " ")
		}
		t.Rows = append(t.Rows, []string{c.Check, result, thresholds(cfg.Checks[c.Check]), detail})
	}
	return t
}

// thresholds writes a check block's expect settings, those set only.
func thresholds(block json.RawMessage) string {
	var b struct {
		Expect map[string]any `json:"expect"`
	}
	if json.Unmarshal(block, &b) != nil || len(b.Expect) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(b.Expect)) {
		if v := b.Expect[k]; v != nil {
			parts = append(parts, k+" = "+thresholdValue(v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func thresholdValue(v any) string {
	switch v := v.(type) {
	case float64:
		return num(v)
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, k+" "+thresholdValue(v[k]))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}
