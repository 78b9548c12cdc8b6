package shard

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// atomicFile is a file being written under a temporary name until Commit
// renames it to its final name.
type atomicFile struct {
	final string
	f     *os.File
	w     *bufio.Writer
}

func createAtomic(final string) (*atomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file private; a shard is data others read.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &atomicFile{final: final, f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// commit flushes, syncs and renames the file to its final name, then syncs
// the folder so the rename itself survives a crash.
func (a *atomicFile) commit() error {
	if err := a.w.Flush(); err != nil {
		a.abort()
		return err
	}
	if err := a.f.Sync(); err != nil {
		a.abort()
		return err
	}
	if err := a.f.Close(); err != nil {
		os.Remove(a.f.Name())
		return err
	}
	if err := os.Rename(a.f.Name(), a.final); err != nil {
		os.Remove(a.f.Name())
		return err
	}
	return syncDir(filepath.Dir(a.final))
}

// abort removes the temporary file; the final name is untouched.
func (a *atomicFile) abort() {
	a.f.Close()
	os.Remove(a.f.Name())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// WriteFile writes data to path atomically: the file at path is either the
// old one or the whole of data, never a mix.
func WriteFile(path string, data []byte) error {
	a, err := createAtomic(path)
	if err != nil {
		return err
	}
	if _, err := a.w.Write(data); err != nil {
		a.abort()
		return err
	}
	return a.commit()
}
