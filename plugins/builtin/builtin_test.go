package builtin

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEveryBuiltinServesItsName(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff([]string{"exec"}, Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	for _, name := range Names() {
		p, ok := New(name)
		if !ok {
			t.Fatalf("New(%q) failed", name)
		}
		schema, err := p.Schema(context.Background())
		if err != nil || schema.Name != name {
			t.Errorf("%s: schema name %q, %v", name, schema.Name, err)
		}
	}
}

func TestServeUnknownName(t *testing.T) {
	t.Parallel()
	if _, ok := New("nope"); ok {
		t.Error("New found a built-in named nope")
	}
	if code := Serve("nope"); code != 2 {
		t.Errorf("Serve(nope) = %d, want 2", code)
	}
}
