package pluginv1_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gpuflow/gpuflow/"

// TestImportBoundaries guards two rules of the design: only the protocol
// adapters import the generated code, so the engine and plugin authors
// speak plugins/api; and plugins never import the engine.
func TestImportBoundaries(t *testing.T) {
	t.Parallel()
	adapters := map[string]bool{
		"plugins/sdk":              true,
		"plugins/client":           true,
		"plugins/proto/v1/convert": true,
		"plugins/proto/v1":         true,
	}
	importers := map[string]bool{}
	root := filepath.Join("..", "..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return nil // a file mid-edit elsewhere is not this test's business
		}
		for _, imp := range file.Imports {
			target, _ := strconv.Unquote(imp.Path.Value)
			if target == module+"plugins/proto/v1" {
				importers[pkg] = true
			}
			if target == module+"plugins/proto/v1" && !adapters[pkg] {
				t.Errorf("%s imports the generated protocol code; use plugins/api", path)
			}
			if strings.HasPrefix(pkg, "plugins/") && (target == module+"engine" || strings.HasPrefix(target, module+"engine/")) {
				t.Errorf("%s (a plugin package) imports %s; plugins never import the engine", path, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !importers["plugins/sdk"] || !importers["plugins/client"] {
		t.Errorf("the walk missed the adapters (found importers %v)", importers)
	}
}
