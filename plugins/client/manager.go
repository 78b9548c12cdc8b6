package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gpuflow/gpuflow/plugins/api"
)

var errManagerClosed = errors.New("the plugin manager is closed")

// BuiltinCommand is the argument that re-executes gpuflow as a built-in
// plugin: `gpuflow internal-plugin NAME`.
const BuiltinCommand = "internal-plugin"

// Options configure a Manager. The zero value works: it finds externals on
// the default search path and has no built-ins.
type Options struct {
	// Executable is the gpuflow binary, re-executed for built-in plugins.
	// Default: os.Executable().
	Executable string
	// Builtins are the built-in plugin names (builtin.Names()). A built-in
	// shadows an external plugin of the same name.
	Builtins []string
	// Dirs are searched for external plugins, in order. Default:
	// SearchDirs(".", Executable, os.Getenv).
	Dirs []string
	// Logger receives plugin log lines, under "plugin.NAME". Default: a
	// logger to stderr at the level in $GPUFLOW_LOG, off when unset.
	Logger hclog.Logger
	// StderrLines is how many stderr lines a crash report keeps. Default 20.
	StderrLines int
	// StartTimeout bounds a plugin's start-up and handshake. Default 20s.
	StartTimeout time.Duration
}

func (o *Options) setDefaults() error {
	if o.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the gpuflow executable for built-in plugins: %w", err)
		}
		o.Executable = exe
	}
	if o.Dirs == nil {
		o.Dirs = SearchDirs(".", o.Executable, os.Getenv)
	}
	if o.Logger == nil {
		o.Logger = defaultLogger()
	}
	if o.StderrLines <= 0 {
		o.StderrLines = 20
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 20 * time.Second
	}
	return nil
}

func defaultLogger() hclog.Logger {
	level := hclog.LevelFromString(os.Getenv("GPUFLOW_LOG"))
	if level == hclog.NoLevel {
		level = hclog.Off
	}
	return hclog.New(&hclog.LoggerOptions{Name: "gpuflow", Level: level, Output: os.Stderr})
}

// Manager finds plugins and runs their processes. Each plugin has at most
// one shared process, started on first use; Start makes extra ones. Close
// ends them all. It is safe for concurrent use.
type Manager struct {
	opts    Options
	sources []Source // usable ones first, in order of precedence
	byName  map[string]Source

	mu      sync.Mutex
	shared  map[string]*sharedPlugin
	started map[*Plugin]bool // by Start, not yet closed
	closed  bool
}

// sharedPlugin is a plugin's shared process, or why it could not start.
// ready is closed once p or err is set.
type sharedPlugin struct {
	ready chan struct{}
	p     *Plugin
	err   error
}

// NewManager discovers plugins; it starts none.
func NewManager(opts Options) (*Manager, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	m := &Manager{
		opts:    opts,
		byName:  map[string]Source{},
		shared:  map[string]*sharedPlugin{},
		started: map[*Plugin]bool{},
	}
	for _, name := range opts.Builtins {
		m.add(Source{Name: name, Path: opts.Executable, Args: []string{BuiltinCommand, name}, Builtin: true})
	}
	for _, src := range Discover(opts.Dirs) {
		m.add(src)
	}
	return m, nil
}

func (m *Manager) add(src Source) {
	if _, dup := m.byName[src.Name]; dup {
		src.Shadowed = true
	} else {
		m.byName[src.Name] = src
	}
	m.sources = append(m.sources, src)
}

// Sources lists every plugin found, shadowed ones included, built-ins
// first, then externals in search order.
func (m *Manager) Sources() []Source { return slices.Clone(m.sources) }

// Info describes a plugin for `gpuflow plugins`.
type Info struct {
	Source
	Version      string
	StageTypes   []string
	Capabilities []string
	// Err is set when the plugin could not be started or described.
	Err error
}

// List describes every plugin found, starting each usable one (once) to
// ask for its schema. A plugin that fails is listed with Err, not
// dropped.
func (m *Manager) List(ctx context.Context) []Info {
	infos := make([]Info, len(m.sources))
	var wg sync.WaitGroup
	for i, src := range m.sources {
		infos[i].Source = src
		if src.Shadowed {
			continue
		}
		wg.Go(func() { m.describe(ctx, &infos[i]) })
	}
	wg.Wait()
	return infos
}

func (m *Manager) describe(ctx context.Context, info *Info) {
	p, err := m.sharedPlugin(ctx, info.Name)
	if err != nil {
		info.Err = err
		return
	}
	schema, err := p.Schema(ctx)
	if err != nil {
		info.Err = err
		return
	}
	info.Version = schema.Version
	info.Capabilities = schema.Capabilities
	for t := range schema.StageTypes {
		info.StageTypes = append(info.StageTypes, t)
	}
	sort.Strings(info.StageTypes)
}

// Provider returns the shared process of the plugin that provides a stage
// type, with its schema already fetched. The plugin whose name is the
// stage type is tried first; then every other plugin in order, each started
// once, until one declares the type.
func (m *Manager) Provider(ctx context.Context, stageType string) (*Plugin, error) {
	var failures []error
	for _, name := range m.candidates(stageType) {
		p, err := m.sharedPlugin(ctx, name)
		if err == nil {
			var schema *api.Schema
			schema, err = p.Schema(ctx)
			if err == nil && schema.StageTypes[stageType] != nil {
				return p, nil
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			failures = append(failures, err)
		}
	}
	return nil, m.notFound(stageType, failures)
}

// candidates are the usable plugin names, the one named like the stage type
// first.
func (m *Manager) candidates(stageType string) []string {
	var names []string
	if _, ok := m.byName[stageType]; ok {
		names = append(names, stageType)
	}
	for _, src := range m.sources {
		if !src.Shadowed && src.Name != stageType {
			names = append(names, src.Name)
		}
	}
	return names
}

func (m *Manager) notFound(stageType string, failures []error) error {
	var names []string
	for name := range m.byName {
		names = append(names, name)
	}
	sort.Strings(names)
	msg := fmt.Sprintf("no plugin provides stage type %q (plugins found: %s); install an executable named %s%s "+
		"in a directory on $%s, in .gpuflow/plugins, beside gpuflow or on $PATH",
		stageType, strings.Join(names, ", "), ExecutablePrefix, stageType, PathEnv)
	if len(failures) == 0 {
		return errors.New(msg)
	}
	return fmt.Errorf("%s; some plugins failed: %w", msg, errors.Join(failures...))
}

// sharedPlugin returns name's shared process, starting it on first use.
// Concurrent callers wait for the one start. A failed start is remembered;
// a process that has since died is started again.
func (m *Manager) sharedPlugin(ctx context.Context, name string) (*Plugin, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errManagerClosed
	}
	sp := m.shared[name]
	if sp != nil && sp.dead() {
		sp = nil
	}
	starter := sp == nil
	if starter {
		sp = &sharedPlugin{ready: make(chan struct{})}
		m.shared[name] = sp
	}
	m.mu.Unlock()

	if starter {
		m.start(ctx, name, sp)
	}
	select {
	case <-sp.ready:
		return sp.p, sp.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start fills in sp. A start cut short by the caller's context is not
// remembered, and a process that finished starting after Close is ended.
func (m *Manager) start(ctx context.Context, name string, sp *sharedPlugin) {
	p, err := m.startAndDescribe(ctx, name)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed && p != nil:
		p.Close()
		p, err = nil, errManagerClosed
	case err != nil && ctx.Err() != nil && m.shared[name] == sp:
		delete(m.shared, name)
	}
	sp.p, sp.err = p, err
	close(sp.ready)
}

// dead reports whether a started shared process has exited since.
func (sp *sharedPlugin) dead() bool {
	select {
	case <-sp.ready:
		return sp.p != nil && sp.p.Exited()
	default:
		return false
	}
}

// startAndDescribe starts a process and fetches its schema, so callers
// never wait on a half-started plugin.
func (m *Manager) startAndDescribe(ctx context.Context, name string) (*Plugin, error) {
	p, err := m.launch(name)
	if err != nil {
		return nil, err
	}
	if _, err := p.Schema(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Start starts a fresh process of the named plugin, owned by the caller,
// who must Close it (Manager.Close also ends it). The engine uses one per
// running stage so that a crash fails only that stage.
func (m *Manager) Start(ctx context.Context, name string) (*Plugin, error) {
	p, err := m.startAndDescribe(ctx, name)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		p.Close()
		return nil, errManagerClosed
	}
	m.started[p] = true
	p.onClose = func() {
		m.mu.Lock()
		delete(m.started, p)
		m.mu.Unlock()
	}
	return p, nil
}

func (m *Manager) launch(name string) (*Plugin, error) {
	src, ok := m.byName[name]
	if !ok {
		return nil, fmt.Errorf("no plugin named %q", name)
	}
	return launch(src, &m.opts)
}

// Close ends every process the manager started, shared or not, in
// parallel; it returns when all are gone. Later calls fail.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var all []*Plugin
	for _, sp := range m.shared {
		select {
		case <-sp.ready:
			if sp.p != nil {
				all = append(all, sp.p)
			}
		default:
		}
	}
	for p := range m.started {
		all = append(all, p)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Go(p.Close)
	}
	wg.Wait()
}
