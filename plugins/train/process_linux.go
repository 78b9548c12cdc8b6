package train

import "syscall"

// dieWithParent: SIGTERM, not SIGKILL, so the trainer still checkpoints.
func dieWithParent(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGTERM
}
