package calibration

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gpuflow/gpuflow/engine/state"
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

// Save writes the file atomically (state.WriteFileAtomic: a temporary
// file beside path, synced, renamed over it), so a reader never sees half
// a file and a crash leaves the old one intact.
func (f *File) Save(path string) error {
	f.FormatVersion = FormatVersion
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFileAtomic(path, append(data, '\n'))
}
