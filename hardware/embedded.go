package hardware

import (
	"fmt"
	"sync"
)

// embeddedSet holds the entries of one folder of embedded files (profiles,
// GPU datasheets), each decoded once on first use. A broken file is a bug
// in this package, which the package's tests catch; at run time it
// surfaces as an error, never a panic.
type embeddedSet[T any] struct {
	all      func() (map[string]T, error)
	notFound error
}

// newEmbeddedSet loads every name that names lists with load, once.
func newEmbeddedSet[T any](names func() []string, load func(string) (T, error), notFound error) embeddedSet[T] {
	return embeddedSet[T]{notFound: notFound, all: sync.OnceValues(func() (map[string]T, error) {
		all := map[string]T{}
		for _, name := range names() {
			v, err := load(name)
			if err != nil {
				return nil, err
			}
			all[name] = v
		}
		return all, nil
	})}
}

// entry returns the entry called name, or an error wrapping notFound.
func (s embeddedSet[T]) entry(name string) (T, error) {
	var zero T
	all, err := s.all()
	if err != nil {
		return zero, err
	}
	v, ok := all[name]
	if !ok {
		return zero, fmt.Errorf("%w named %q", s.notFound, name)
	}
	return v, nil
}
