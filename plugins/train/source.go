package train

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Formats of the weights a run starts from.
const (
	formatHF         = "hf"         // a Hugging Face folder: config.json and safetensors
	formatCheckpoint = "checkpoint" // a gpuflow checkpoint folder (DCP)
	hfConfigFile     = "config.json"
)

// absPath makes p absolute against the workload's folder, as every path a
// stage reads or outputs is; "" stays "".
func (d *decoder) absPath(at cty.Path, workDir, p string) string {
	if p == "" {
		return ""
	}
	abs, err := api.AbsPath(workDir, p)
	if err != nil {
		d.fail(at, "Cannot resolve "+p, err.Error()+".")
	}
	return abs
}

// weights reads attr (a finetune's base, a pretrain's init) as a folder of
// weights to start from, and tells which kind it is.
func (d *decoder) weights(attr, workDir string, required bool) (string, string) {
	p := d.absPath(cty.GetAttrPath(attr), workDir, d.str(attr, ""))
	if p == "" {
		if required {
			d.fail(cty.GetAttrPath(attr), "No "+attr+" model", attr+" must name a Hugging Face model folder or a gpuflow checkpoint, e.g. stage.pretrain.NAME.outputs.checkpoint.")
		}
		return "", ""
	}
	for _, f := range []struct{ marker, format string }{{hfConfigFile, formatHF}, {dcpMetadata, formatCheckpoint}} {
		if st, err := os.Stat(filepath.Join(p, f.marker)); err == nil && st.Mode().IsRegular() {
			return p, f.format
		}
	}
	d.fail(cty.GetAttrPath(attr), "Not a model folder",
		fmt.Sprintf("%s is neither a Hugging Face model folder (it has no %s) nor a gpuflow checkpoint (it has no %s). Point %s at a folder with config.json and safetensors, or at stage.pretrain.NAME.outputs.checkpoint.", p, hfConfigFile, dcpMetadata, attr))
	return p, ""
}

// device is where the ranks run: GPUs, or CPU cores for a smoke test.
func (d *decoder) device() string {
	v := d.str("device", deviceCUDA)
	if v != deviceCUDA && v != deviceCPU {
		d.fail(cty.GetAttrPath("device"), "Unknown device", fmt.Sprintf("device %q is not %q or %q.", v, deviceCUDA, deviceCPU))
	}
	return v
}

// export reads the export block into the run's export folders.
func (d *decoder) export(stageType, workDir string, cfg *runConfig) {
	e := known(d.c, "export")
	if e.IsNull() {
		return
	}
	at := cty.GetAttrPath("export")
	cfg.ExportHF = d.absPath(at.GetAttr("hf"), workDir, fieldString(e, "hf", ""))
	cfg.ExportPEFT = d.absPath(at.GetAttr("peft"), workDir, fieldString(e, "peft", ""))
	cfg.ExportTokenizer = d.absPath(at.GetAttr("tokenizer"), workDir, fieldString(e, "tokenizer", ""))
	if cfg.ExportTokenizer == "" && cfg.Model.HF != "" {
		cfg.ExportTokenizer = cfg.Model.HF
	}
}
