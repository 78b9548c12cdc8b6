package dag

import (
	"sort"
)

// Graph holds nodes and "depends on" edges between them.
type Graph struct {
	nodes map[string]bool
	deps  map[string]map[string]bool // node -> what it depends on
	users map[string]map[string]bool // node -> what depends on it
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{nodes: map[string]bool{}, deps: map[string]map[string]bool{}, users: map[string]map[string]bool{}}
}

// Add adds a node; adding it twice is harmless.
func (g *Graph) Add(n string) { g.nodes[n] = true }

// Connect records that from depends on to. Both must have been added.
func (g *Graph) Connect(from, to string) {
	if g.deps[from] == nil {
		g.deps[from] = map[string]bool{}
	}
	if g.users[to] == nil {
		g.users[to] = map[string]bool{}
	}
	g.deps[from][to] = true
	g.users[to][from] = true
}

// Has reports whether n is a node.
func (g *Graph) Has(n string) bool { return g.nodes[n] }

// Nodes returns every node, sorted.
func (g *Graph) Nodes() []string { return sortedSet(g.nodes) }

// DependsOn returns the nodes n depends on directly, sorted.
func (g *Graph) DependsOn(n string) []string { return sortedSet(g.deps[n]) }

// Dependents returns the nodes that depend on n directly, sorted.
func (g *Graph) Dependents(n string) []string { return sortedSet(g.users[n]) }

// Edge is a dependency from From on To.
type Edge struct{ From, To string }

// Edges returns every edge, sorted.
func (g *Graph) Edges() []Edge {
	var out []Edge
	for _, from := range g.Nodes() {
		for _, to := range g.DependsOn(from) {
			out = append(out, Edge{from, to})
		}
	}
	return out
}

// Cycle returns the nodes of one cycle, the first repeated at the end, or
// nil when the graph is acyclic. The search is deterministic.
func (g *Graph) Cycle() []string {
	_, cycle := g.order()
	return cycle
}

// TopoOrder returns the nodes so that each follows what it depends on, ties
// broken by name; ok is false when the graph has a cycle.
func (g *Graph) TopoOrder() (order []string, ok bool) {
	order, cycle := g.order()
	return order, cycle == nil
}

func (g *Graph) order() (order, cycle []string) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) bool
	visit = func(n string) bool {
		switch state[n] {
		case done:
			return true
		case visiting:
			for i, s := range stack {
				if s == n {
					cycle = append(append([]string{}, stack[i:]...), n)
				}
			}
			return false
		}
		state[n] = visiting
		stack = append(stack, n)
		for _, d := range g.DependsOn(n) {
			if !visit(d) {
				return false
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		order = append(order, n)
		return true
	}
	for _, n := range g.Nodes() {
		if !visit(n) {
			return nil, cycle
		}
	}
	return order, nil
}

// Ancestors returns n and everything it depends on, transitively.
func (g *Graph) Ancestors(n string) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(x string) {
		if seen[x] {
			return
		}
		seen[x] = true
		for d := range g.deps[x] {
			visit(d)
		}
	}
	visit(n)
	return seen
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
