package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/gpuflow/gpuflow/engine"
)

func runShow(env *cliEnv, args []string) int {
	var asJSON bool
	fs := newFlagSet("show", env, "PLANFILE")
	fs.BoolVar(&asJSON, "json", false, "Print the plan as JSON")
	if !parseFlags(fs, args) {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.stderr, "gpuflow show: expected one PLANFILE (written by gpuflow plan -out FILE)")
		fs.Usage()
		return 1
	}
	plan, err := readPlanFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	if asJSON {
		writeJSON(env, redactSensitive(plan))
		return 0
	}
	writePlanHuman(env.stdout, plan, newPalette(fs.colour(env)))
	return 0
}

// readPlanFile reads a saved plan, checking its format_version first so a
// plan from another gpuflow release is refused by name.
func readPlanFile(path string) (*engine.Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read plan %s: %v", path, unwrapPathErr(err))
	}
	var head struct {
		FormatVersion string `json:"format_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.FormatVersion == "" {
		return nil, fmt.Errorf("%s is not a saved gpuflow plan (write one with gpuflow plan -out FILE)", path)
	}
	if head.FormatVersion != engine.PlanFormatVersion {
		return nil, fmt.Errorf("plan %s has format_version %s, but this gpuflow reads %s; re-run gpuflow plan -out with this release",
			path, head.FormatVersion, engine.PlanFormatVersion)
	}
	var plan engine.Plan
	if err := json.Unmarshal(b, &plan); err != nil {
		return nil, fmt.Errorf("plan %s: %v", path, err)
	}
	return &plan, nil
}
