package engine

import (
	"context"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/client"
)

// ClientLauncher starts stage processes through a plugin manager: each
// stage gets a fresh process of its plugin (client.Manager.Start).
func ClientLauncher(m *client.Manager) Launcher { return clientLauncher{m} }

type clientLauncher struct{ m *client.Manager }

func (l clientLauncher) Launch(ctx context.Context, p *Plugin) (PluginProcess, error) {
	proc, err := l.m.Start(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	return clientProcess{proc}, nil
}

type clientProcess struct{ p *client.Plugin }

func (c clientProcess) Provider() api.Provider { return c.p }
func (c clientProcess) Exited() bool           { return c.p.Exited() }
func (c clientProcess) StderrTail() []string   { return c.p.Stderr() }
func (c clientProcess) Kill()                  { c.p.Close() }
