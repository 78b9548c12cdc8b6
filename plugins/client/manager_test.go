package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/client"
)

func TestListDescribesEveryPlugin(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "echo", "exec", "future")
	m := newManager(t, client.Options{Builtins: []string{"exec"}, Dirs: []string{dir}})
	got := m.List(t.Context())
	type row struct {
		Name, Version     string
		StageTypes, Caps  []string
		Builtin, Shadowed bool
		Failed            bool
	}
	var rows []row
	for _, info := range got {
		rows = append(rows, row{info.Name, info.Version, info.StageTypes, info.Capabilities, info.Builtin, info.Shadowed, info.Err != nil})
	}
	want := []row{
		{"exec", "0.1.0", []string{"exec"}, []string{api.CapabilityStop, api.CapabilityConcurrentApply}, true, false, false},
		{"echo", "2.5.0", []string{"echo"}, []string{api.CapabilityConcurrentApply}, false, false, false},
		{"exec", "", nil, nil, false, true, false}, // the built-in shadows it
		{"future", "", nil, nil, false, false, true},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if got[0].Path == dir || got[2].Path == "" {
		t.Errorf("paths: built-in %s, external %s", got[0].Path, got[2].Path)
	}
}

func TestProviderStartsEachPluginOnce(t *testing.T) {
	t.Parallel()
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "echo", "fake")}})
	const callers = 8
	got := make([]*client.Plugin, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			p, err := m.Provider(t.Context(), "echo")
			if err != nil {
				t.Error(err)
			}
			got[i] = p
		})
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] {
			t.Fatal("concurrent callers got different processes")
		}
	}
	// A fresh process is another one, and the shared one is unaffected.
	fresh, err := m.Start(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if fresh == got[0] {
		t.Error("Start returned the shared process")
	}
	fresh.Close()
	if !fresh.Exited() || got[0].Exited() {
		t.Errorf("after closing the fresh one: fresh exited %v, shared exited %v", fresh.Exited(), got[0].Exited())
	}
}

func TestProviderFindsStageTypeInAnyPlugin(t *testing.T) {
	t.Parallel()
	// The stage type "echo" lives in a plugin named otherwise.
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "fake", "echo")}})
	p, err := m.Provider(t.Context(), "fake")
	if err != nil || p.Name() != "fake" {
		t.Fatalf("fake: %v, %v", p, err)
	}
	_, err = m.Provider(t.Context(), "nosuch")
	for _, want := range []string{`no plugin provides stage type "nosuch"`, "plugins found: echo, fake", "gpuflow-plugin-nosuch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestSharedProcessRestartsAfterCrash(t *testing.T) {
	t.Parallel()
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "fake")}})
	first, err := m.Provider(t.Context(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	_, err = first.ApplyStage(t.Context(), fakeRequest("x", "crash"), &recorder{})
	var crash *client.CrashError
	if !errors.As(err, &crash) {
		t.Fatalf("got %v, want a crash", err)
	}
	second, err := m.Provider(t.Context(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatal("got the dead process again")
	}
	if _, err := second.ApplyStage(t.Context(), fakeRequest("y", "succeed"), &recorder{}); err != nil {
		t.Error(err)
	}
}

func TestCloseEndsEveryProcess(t *testing.T) {
	t.Parallel()
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "echo")}})
	shared, err := m.Provider(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := m.Start(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !shared.Exited() || !fresh.Exited() {
		t.Errorf("after Close: shared exited %v, fresh exited %v", shared.Exited(), fresh.Exited())
	}
	if _, err := m.Provider(context.Background(), "echo"); err == nil {
		t.Error("a closed manager started a plugin")
	}
}
