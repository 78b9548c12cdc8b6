package exec

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// stageSchema is the body of an exec stage.
var stageSchema = &api.BlockSchema{
	Description: "Runs a command.",
	Attributes: map[string]*api.Attribute{
		"command": {Type: cty.List(cty.String), Required: true, Description: "The program and its arguments (no shell)."},
		"env":     {Type: cty.Map(cty.String), Description: "Environment variables added for the command."},
		"dir":     {Type: cty.String, Description: "Working directory, relative to the workload's directory."},
		"timeout": {Type: cty.String, Description: `Longest the command may run, as a duration like "90s" or "10m".`},
	},
}

// config is a decoded exec stage body.
type config struct {
	Command []string
	Env     map[string]string
	Dir     string
	Timeout time.Duration // zero: none
}

// decodeConfig checks v and decodes what is known of it. At plan time parts
// may be unknown; they are left zero and not checked.
func decodeConfig(v cty.Value) (config, api.Diagnostics) {
	var cfg config
	var diags api.Diagnostics
	if v.IsNull() || !v.IsKnown() {
		return cfg, diags
	}
	cfg.Command, diags = decodeCommand(attr(v, "command"))
	env, envDiags := decodeEnv(attr(v, "env"))
	cfg.Env = env
	diags = append(diags, envDiags...)
	if dir := attr(v, "dir"); dir.IsKnown() && !dir.IsNull() {
		cfg.Dir = dir.AsString()
	}
	timeout, timeoutDiags := decodeTimeout(attr(v, "timeout"))
	cfg.Timeout = timeout
	diags = append(diags, timeoutDiags...)
	return cfg, diags
}

func decodeCommand(v cty.Value) ([]string, api.Diagnostics) {
	path := cty.GetAttrPath("command")
	if !v.IsKnown() {
		return nil, nil
	}
	if v.IsNull() || v.LengthInt() == 0 {
		return nil, api.Diagnostics{{
			Severity: api.Error,
			Summary:  "Empty command",
			Detail:   `The command needs at least the program to run, like command = ["make", "test"].`,
			Path:     path,
		}}
	}
	var argv []string
	var diags api.Diagnostics
	for i, arg := range v.AsValueSlice() {
		switch {
		case !arg.IsKnown():
			argv = append(argv, "")
		case arg.IsNull():
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  "Null command argument",
				Detail:   fmt.Sprintf("Argument %d of the command is null; every argument must be a string.", i),
				Path:     path.IndexInt(i),
			})
		case i == 0 && arg.AsString() == "":
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  "Empty program name",
				Detail:   "The first element of the command names the program to run; it is empty.",
				Path:     path.IndexInt(0),
			})
		default:
			argv = append(argv, arg.AsString())
		}
	}
	return argv, diags
}

func decodeEnv(v cty.Value) (map[string]string, api.Diagnostics) {
	if !v.IsKnown() || v.IsNull() {
		return nil, nil
	}
	env := map[string]string{}
	var diags api.Diagnostics
	for key, val := range v.AsValueMap() {
		path := cty.GetAttrPath("env").IndexString(key)
		switch {
		case key == "" || strings.ContainsAny(key, "=\x00"):
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  "Invalid environment variable name",
				Detail:   fmt.Sprintf("%q cannot be an environment variable name: names are not empty and hold no \"=\".", key),
				Path:     path,
			})
		case val.IsNull():
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  "Null environment variable",
				Detail:   fmt.Sprintf("The value of %s is null; give it a string, or leave it out.", key),
				Path:     path,
			})
		case val.IsKnown():
			env[key] = val.AsString()
		}
	}
	return env, diags
}

func decodeTimeout(v cty.Value) (time.Duration, api.Diagnostics) {
	if !v.IsKnown() || v.IsNull() {
		return 0, nil
	}
	d, err := time.ParseDuration(v.AsString())
	if err == nil && d > 0 {
		return d, nil
	}
	return 0, api.Diagnostics{{
		Severity: api.Error,
		Summary:  "Invalid timeout",
		Detail:   fmt.Sprintf(`%q is not a positive duration; write a number and a unit, like "90s", "10m" or "2h".`, v.AsString()),
		Path:     cty.GetAttrPath("timeout"),
	}}
}

// attr reads an attribute, as null where the config lacks it (a host that
// decoded the body with an older schema).
func attr(obj cty.Value, name string) cty.Value {
	if !obj.Type().IsObjectType() || !obj.Type().HasAttribute(name) {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return obj.GetAttr(name)
}

// workDir is where the command runs: dir relative to the workload's
// directory, or dir itself when absolute.
func (c config) workDir(base string) string {
	if filepath.IsAbs(c.Dir) {
		return c.Dir
	}
	return filepath.Join(base, c.Dir)
}

// commandLine renders the command for people, quoting arguments a shell
// would split.
func commandLine(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
