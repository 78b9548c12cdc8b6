package exec

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
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
	// timeoutSet says that the body names a timeout, known or not.
	timeoutSet bool
	// unknown lists what is known only at apply time; it is left zero
	// and not checked.
	unknown sdk.Unknowns
}

// body is an exec stage body as written.
type body struct {
	Command []string          `cty:"command"`
	Env     map[string]string `cty:"env"`
	Dir     string            `cty:"dir"`
	Timeout *string           `cty:"timeout"`
	Unknown sdk.Unknowns
}

// decodeConfig checks v and decodes what is known of it.
func decodeConfig(v cty.Value) (config, api.Diagnostics) {
	var b body
	diags := sdk.Decode(v, &b)
	cfg := config{Command: b.Command, Env: b.Env, Dir: b.Dir, unknown: b.Unknown,
		timeoutSet: b.Timeout != nil || b.Unknown.Attr("timeout")}
	switch {
	case !b.Unknown.Attr("command"):
		diags = append(diags, checkCommand(b.Command)...)
	case emptyProgram(v):
		// Later arguments are known only at apply time; the program is
		// known now and can be refused now.
		diags = append(diags, checkCommand([]string{""})...)
	}
	diags = append(diags, checkEnv(b.Env)...)
	if b.Timeout != nil {
		timeout, timeoutDiags := parseTimeout(*b.Timeout)
		cfg.Timeout = timeout
		diags = append(diags, timeoutDiags...)
	}
	return cfg, diags
}

// checkCommand wants a program to run.
func checkCommand(argv []string) api.Diagnostics {
	path := cty.GetAttrPath("command")
	switch {
	case len(argv) == 0:
		return api.Diagnostics{{
			Severity: api.Error,
			Summary:  "Empty command",
			Detail:   `The command needs at least the program to run, like command = ["make", "test"].`,
			Path:     path,
		}}
	case argv[0] == "":
		return api.Diagnostics{{
			Severity: api.Error,
			Summary:  "Empty program name",
			Detail:   "The first element of the command names the program to run; it is empty.",
			Path:     path.IndexInt(0),
		}}
	}
	return nil
}

// emptyProgram says whether the body v names a known, empty program as
// command[0].
func emptyProgram(v cty.Value) bool {
	program, err := cty.GetAttrPath("command").IndexInt(0).Apply(v)
	return err == nil && program.Type() == cty.String && program.IsKnown() && !program.IsNull() && program.AsString() == ""
}

func checkEnv(env map[string]string) api.Diagnostics {
	var diags api.Diagnostics
	for key := range env {
		if key == "" || strings.ContainsAny(key, "=\x00") {
			diags = append(diags, api.Diagnostic{
				Severity: api.Error,
				Summary:  "Invalid environment variable name",
				Detail:   fmt.Sprintf("%q cannot be an environment variable name: names are not empty and hold no \"=\".", key),
				Path:     cty.GetAttrPath("env").IndexString(key),
			})
		}
	}
	return diags
}

// parseTimeout reads timeout; empty (unset or unknown) is no limit.
func parseTimeout(s string) (time.Duration, api.Diagnostics) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d > 0 {
		return d, nil
	}
	return 0, api.Diagnostics{{
		Severity: api.Error,
		Summary:  "Invalid timeout",
		Detail:   fmt.Sprintf(`%q is not a positive duration; write a number and a unit, like "90s", "10m" or "2h".`, s),
		Path:     cty.GetAttrPath("timeout"),
	}}
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
