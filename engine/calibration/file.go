package calibration

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Load reads a calibration file. A missing file is not an error: it
// yields an empty File, since nothing has been measured yet.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes calibration JSON; name is used in messages. The version is
// read first so a file from a newer gpuflow is reported as such rather
// than as a decoding error.
func Parse(data []byte, name string) (*File, error) {
	var head struct {
		FormatVersion *int `json:"format_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a calibration file: %w", name, err)
	}
	switch {
	case head.FormatVersion == nil:
		return nil, fmt.Errorf("%s: no format_version; a calibration file starts with {\"format_version\": %d, ...}", name, FormatVersion)
	case *head.FormatVersion > FormatVersion:
		return nil, fmt.Errorf("%s: written in calibration format %d by a newer gpuflow; this one reads format %d, upgrade gpuflow", name, *head.FormatVersion, FormatVersion)
	case *head.FormatVersion < 1:
		return nil, fmt.Errorf("%s: format_version %d is not a calibration format", name, *head.FormatVersion)
	}
	f := New()
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Profiles == nil {
		f.Profiles = map[string]*Profile{}
	}
	return f, nil
}

// Save writes the file atomically: to a temporary file in the same
// directory, flushed to disk, then renamed over path, so a reader never
// sees half a file and a crash leaves the old one intact.
func (f *File) Save(path string) (err error) {
	f.FormatVersion = FormatVersion
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes the rename durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
