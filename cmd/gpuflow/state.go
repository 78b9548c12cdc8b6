package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
)

func init() {
	registerCommand("state", command{"List, show or remove stages recorded in state", runState})
}

const stateUsage = "Usage: gpuflow state list | show ADDR | rm ADDR... [-state FILE | -workload PATH] [-json]"

type stateArgs struct {
	stateFile string
	workload  string
	json      bool
	// file is the state file resolve chose.
	file string
}

// stateCommands are state's subcommands, each given the flag set with the
// options they share.
var stateCommands = map[string]func(env *cliEnv, fs *flagSet, a *stateArgs, args []string) int{
	"list": stateList,
	"show": stateShow,
	"rm":   stateRm,
}

// runState dispatches the state subcommands. Each takes -state FILE, or
// -workload PATH to find the default state of that workload (".").
func runState(env *cliEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(env.stderr, stateUsage)
		return 1
	}
	var a stateArgs
	fs := newFlagSet("state "+args[0], env, "")
	fs.StringVar(&a.stateFile, "state", "", "State file (default .gpuflow/state/<workload>.json)")
	fs.StringVar(&a.workload, "workload", "", "Workload whose default state file to use (default: the only state in .gpuflow/state)")
	fs.BoolVar(&a.json, "json", false, "Print JSON")
	if sub, ok := stateCommands[args[0]]; ok {
		return sub(env, fs, &a, args[1:])
	}
	fmt.Fprintf(env.stderr, "gpuflow state: unknown subcommand %q\n%s\n", args[0], stateUsage)
	return 1
}

// resolve picks the state file: -state, else -workload's default, else
// the only state file in .gpuflow/state, as a user who applied one workload
// here expects. With several, it asks which.
func (a *stateArgs) resolve() error {
	var err error
	a.file, err = a.choose()
	return err
}

func (a *stateArgs) choose() (string, error) {
	switch {
	case a.stateFile != "":
		return a.stateFile, nil
	case a.workload != "":
		return engine.DefaultStatePath(a.workload), nil
	}
	files, _ := filepath.Glob(filepath.Join(engine.DataDir, "state", "*.json"))
	switch len(files) {
	case 0:
		return engine.DefaultStatePath("."), nil
	case 1:
		return files[0], nil
	}
	return "", fmt.Errorf("this directory holds the state of several workloads (%s); pass -workload PATH or -state FILE to choose one",
		strings.Join(files, ", "))
}

// readStateOrSay reads state, printing why when it cannot; no state yet
// reads as empty.
func readStateOrSay(env *cliEnv, a *stateArgs) (*state.State, bool) {
	if err := a.resolve(); err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return nil, false
	}
	st, err := state.Read(a.file)
	if errors.Is(err, state.ErrNotExist) {
		return state.New("", ""), true
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return nil, false
	}
	return st, true
}

func stateList(env *cliEnv, fs *flagSet, a *stateArgs, args []string) int {
	if !parseFlags(fs, args) {
		return 1
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(env.stderr, "gpuflow state list: takes no arguments")
		return 1
	}
	st, ok := readStateOrSay(env, a)
	if !ok {
		return 1
	}
	addrs := sortedStageAddrs(st)
	if a.json {
		list := []*state.Stage{}
		for _, addr := range addrs {
			list = append(list, st.Stages[addr])
		}
		writeJSON(env, list)
		return 0
	}
	if len(addrs) == 0 {
		fmt.Fprintf(env.stdout, "No stages recorded in %s.\n", a.file)
		return 0
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATUS\tENDED\tDURATION\tPLUGIN")
	for _, addr := range addrs {
		s := st.Stages[addr]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\n", addr, s.Status, timeText(s.EndedAt), stageDuration(s), s.Plugin.Name, s.Plugin.Version)
	}
	tw.Flush()
	return 0
}

func sortedStageAddrs(st *state.State) []string {
	addrs := make([]string, 0, len(st.Stages))
	for addr := range st.Stages {
		addrs = append(addrs, addr)
	}
	sort.Strings(addrs)
	return addrs
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func stageDuration(s *state.Stage) string {
	if s.StartedAt.IsZero() || s.EndedAt.IsZero() {
		return "-"
	}
	return shortDuration(s.EndedAt.Sub(s.StartedAt))
}

// stageArg takes one stage address, accepting stage.TYPE.NAME too.
func stageArg(addr string) string {
	const prefix = "stage."
	if len(addr) > len(prefix) && addr[:len(prefix)] == prefix {
		return addr[len(prefix):]
	}
	return addr
}

func stateShow(env *cliEnv, fs *flagSet, a *stateArgs, args []string) int {
	if !parseFlags(fs, args) {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.stderr, "gpuflow state show: expected one stage address, as TYPE.NAME")
		return 1
	}
	st, ok := readStateOrSay(env, a)
	if !ok {
		return 1
	}
	s := st.Stages[stageArg(fs.Arg(0))]
	if s == nil {
		fmt.Fprintf(env.stderr, "Error: no stage %s in %s%s. gpuflow state list shows what is recorded.\n", fs.Arg(0), a.file, suggestStage(fs.Arg(0), st))
		return 1
	}
	if a.json {
		writeJSON(env, s)
		return 0
	}
	writeStageRecord(env, s)
	return 0
}

func suggestStage(given string, st *state.State) string {
	if s := dsl.Suggest(stageArg(given), sortedStageAddrs(st)); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

func writeStageRecord(env *cliEnv, s *state.Stage) {
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	row := func(k, format string, v ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, v...)...) }
	row("stage", "%s", s.Address)
	row("status", "%s", s.Status)
	if s.Error != "" {
		row("error", "%s", s.Error)
	}
	row("plugin", "%s %s", s.Plugin.Name, s.Plugin.Version)
	row("input hash", "%s", s.InputHash)
	row("started", "%s", timeText(s.StartedAt))
	row("ended", "%s", timeText(s.EndedAt))
	row("duration", "%s", stageDuration(s))
	if s.LogPath != "" {
		row("log", "%s", s.LogPath)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Outputs)) {
		row("output "+name, "%s", s.Outputs[name])
	}
	for _, name := range slices.Sorted(maps.Keys(s.Metrics)) {
		m := s.Metrics[name]
		row("metric "+name, "last %s, min %s, max %s over %d report(s)%s", number(m.Last), number(m.Min), number(m.Max), m.Count, unitTail(m.Unit))
	}
	if len(s.Config) > 0 {
		row("config", "%s", compactJSON(s.Config))
	}
	tw.Flush()
}

// compactJSON prints JSON on one line, without HTML escapes.
func compactJSON(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func unitTail(u string) string {
	if u == "" {
		return ""
	}
	return " (" + u + ")"
}

// stateRm forgets stages, so the next apply runs them again. It takes the
// apply lock, so it never races an apply.
func stateRm(env *cliEnv, fs *flagSet, a *stateArgs, args []string) int {
	if !parseFlags(fs, args) {
		return 1
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(env.stderr, "gpuflow state rm: expected one or more stage addresses, as TYPE.NAME")
		return 1
	}
	if err := a.resolve(); err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	sf, err := engine.OpenState(a.file, a.workload)
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", stateOpenError(err))
		return 1
	}
	defer sf.Close()
	current := sf.Snapshot()
	if current == nil {
		current = state.New("", "")
	}
	var addrs []string
	for _, arg := range fs.Args() {
		addr := stageArg(arg)
		if current.Stages[addr] == nil {
			fmt.Fprintf(env.stderr, "Error: no stage %s in %s%s; nothing was removed.\n", arg, a.file, suggestStage(arg, current))
			return 1
		}
		addrs = append(addrs, addr)
	}
	err = sf.Update(func(s *state.State) {
		for _, addr := range addrs {
			delete(s.Stages, addr)
		}
	})
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: writing state: %s\n", err)
		return 1
	}
	for _, addr := range addrs {
		fmt.Fprintf(env.stdout, "Removed %s from state; the next apply runs it again.\n", addr)
	}
	return 0
}

func stateOpenError(err error) error {
	if errors.Is(err, state.ErrLocked) {
		return err
	}
	return fmt.Errorf("cannot open state: %w", err)
}
