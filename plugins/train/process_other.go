//go:build unix && !linux

package train

import "syscall"

// dieWithParent has no portable equivalent outside Linux; Stop still ends
// the group.
func dieWithParent(*syscall.SysProcAttr) {}
