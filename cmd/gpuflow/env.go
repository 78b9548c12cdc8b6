package main

import (
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

func defaultEnv() *cliEnv {
	return &cliEnv{
		stdin:      os.Stdin,
		stdout:     os.Stdout,
		stderr:     os.Stderr,
		environ:    os.Environ(),
		isTerminal: isatty.IsTerminal(os.Stdout.Fd()),
	}
}

// useColor is true only on a terminal, never with NO_COLOR set (to
// anything) or -no-color.
func (e *cliEnv) useColor(noColorFlag bool) bool {
	_, noColorEnv := lookupEnv(e.environ, "NO_COLOR")
	return e.isTerminal && !noColorFlag && !noColorEnv
}

func lookupEnv(environ []string, name string) (string, bool) {
	prefix := name + "="
	for _, kv := range environ {
		if len(kv) >= len(prefix) && kv[:len(prefix)] == prefix {
			return kv[len(prefix):], true
		}
	}
	return "", false
}

// palette holds the colours of human output; with colour off every one
// prints plain text.
type palette struct {
	bold, green, yellow, red, cyan, dim *color.Color
}

func newPalette(on bool) *palette {
	mk := func(attrs ...color.Attribute) *color.Color {
		c := color.New(attrs...)
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c
	}
	return &palette{
		bold: mk(color.Bold), green: mk(color.FgGreen), yellow: mk(color.FgYellow),
		red: mk(color.FgRed), cyan: mk(color.FgCyan), dim: mk(color.Faint),
	}
}
