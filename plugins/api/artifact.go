package api

import (
	"io/fs"
	"os"
	"path/filepath"
)

// ArtifactAt describes the file or folder at path as an artifact: a file's
// size, or a folder's file count and the sum of their sizes.
func ArtifactAt(name, path string) (*Artifact, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	a := &Artifact{Name: name, Path: path, Bytes: st.Size()}
	if !st.IsDir() {
		return a, nil
	}
	a.Bytes = 0
	err = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		a.Files++
		a.Bytes += info.Size()
		return nil
	})
	return a, err
}
