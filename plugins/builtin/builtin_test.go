package builtin

import (
	"context"
	"slices"
	"testing"
)

func TestEveryBuiltinServesItsName(t *testing.T) {
	t.Parallel()
	names := Names()
	if !slices.IsSorted(names) || !slices.Contains(names, "exec") {
		t.Errorf("names %v: want them sorted, exec among them", names)
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
