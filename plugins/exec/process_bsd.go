//go:build unix && !linux

package exec

import "syscall"

// dieWithParent: outside Linux there is no parent-death signal; a killed
// plugin leaves its command to finish on its own.
func dieWithParent(*syscall.SysProcAttr) {}
