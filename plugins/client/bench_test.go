package client_test

import (
	"context"
	"testing"

	"github.com/gpuflow/gpuflow/plugins/client"
	"github.com/gpuflow/gpuflow/plugins/fake"
)

// BenchmarkStartSchemaStop measures what a fresh process per stage costs:
// start the plugin (fork, exec, handshake, connect), GetSchema, Stop, and
// close it. It runs the real fake plugin binary, built without -race.
// Target: under 30 ms per process on 2 cores.
func BenchmarkStartSchemaStop(b *testing.B) {
	dir := b.TempDir()
	if _, err := fake.Build(dir); err != nil {
		b.Fatal(err)
	}
	m := newManager(b, client.Options{Dirs: []string{dir}})
	ctx := context.Background()
	for b.Loop() {
		p, err := m.Start(ctx, "fake")
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}
