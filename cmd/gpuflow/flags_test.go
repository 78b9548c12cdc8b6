package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/gpuflow/gpuflow/plugins/client"
)

// TestCommonFlags checks that every verb, and every state subcommand,
// takes the common flags: `VERB -no-color -h` parses -no-color and then
// lists it among the verb's options.
func TestCommonFlags(t *testing.T) {
	t.Parallel()
	var verbs [][]string
	for name := range commands {
		// The internal plugin command is gpuflow starting itself; its one
		// argument is a plugin name, and it has no options.
		if name != client.BuiltinCommand {
			verbs = append(verbs, []string{name})
		}
	}
	for sub := range stateCommands {
		verbs = append(verbs, []string{"state", sub})
	}
	if len(verbs) < 14 {
		t.Fatalf("found %d verbs; the registry looks empty", len(verbs))
	}
	for _, verb := range verbs {
		t.Run(strings.Join(verb, "_"), func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			env := &cliEnv{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr}
			run(append(slices.Clone(verb), "-no-color", "-h"), env)
			got := stderr.String()
			if strings.Contains(got, "not defined") || !strings.Contains(got, "-no-color") {
				t.Errorf("gpuflow %s -no-color -h printed:\n%s\nwant the usage, listing -no-color", strings.Join(verb, " "), got)
			}
		})
	}
}
