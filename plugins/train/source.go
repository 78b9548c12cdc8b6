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
func absPath(at cty.Path, workDir, p string) (string, api.Diagnostics) {
	if p == "" {
		return "", nil
	}
	abs, err := api.AbsPath(workDir, p)
	if err != nil {
		return abs, api.Diagnostics{{Severity: api.Error, Summary: "Cannot resolve " + p, Detail: err.Error() + ".", Path: at}}
	}
	return abs, nil
}

// weights reads p, the value of attr (a finetune's base, a pretrain's
// init), as a folder of weights to start from, and tells which kind it is.
func weights(attr, p, workDir string, required bool) (string, string, api.Diagnostics) {
	at := cty.GetAttrPath(attr)
	p, diags := absPath(at, workDir, p)
	if p == "" {
		if required {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "No " + attr + " model", Path: at,
				Detail: attr + " must name a Hugging Face model folder or a gpuflow checkpoint, e.g. stage.pretrain.NAME.outputs.checkpoint."})
		}
		return "", "", diags
	}
	for _, f := range []struct{ marker, format string }{{hfConfigFile, formatHF}, {dcpMetadata, formatCheckpoint}} {
		if st, err := os.Stat(filepath.Join(p, f.marker)); err == nil && st.Mode().IsRegular() {
			return p, f.format, diags
		}
	}
	return p, "", append(diags, api.Diagnostic{Severity: api.Error, Summary: "Not a model folder", Path: at,
		Detail: fmt.Sprintf("%s is neither a Hugging Face model folder (it has no %s) nor a gpuflow checkpoint (it has no %s). Point %s at a folder with config.json and safetensors, or at stage.pretrain.NAME.outputs.checkpoint.", p, hfConfigFile, dcpMetadata, attr)})
}

// checkDevice: the ranks run on GPUs, or on CPU cores for a smoke test.
func checkDevice(device string) api.Diagnostics {
	if device == deviceCUDA || device == deviceCPU {
		return nil
	}
	return api.Diagnostics{{Severity: api.Error, Summary: "Unknown device", Path: cty.GetAttrPath("device"),
		Detail: fmt.Sprintf("device %q is not %q or %q.", device, deviceCUDA, deviceCPU)}}
}

// export resolves the export block's folders into the run's config.
func export(e *exportArgs, workDir string, cfg *runConfig) api.Diagnostics {
	if e == nil {
		return nil
	}
	at := cty.GetAttrPath("export")
	var diags, d api.Diagnostics
	cfg.ExportHF, d = absPath(at.GetAttr("hf"), workDir, str(e.HF))
	diags = append(diags, d...)
	cfg.ExportPEFT, d = absPath(at.GetAttr("peft"), workDir, str(e.PEFT))
	diags = append(diags, d...)
	cfg.ExportTokenizer, d = absPath(at.GetAttr("tokenizer"), workDir, e.Tokenizer)
	diags = append(diags, d...)
	if cfg.ExportTokenizer == "" && cfg.Model.HF != "" {
		cfg.ExportTokenizer = cfg.Model.HF
	}
	return diags
}

// str is *p, or "" where the body sets nothing.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
