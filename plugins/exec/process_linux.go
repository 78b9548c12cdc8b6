package exec

import "syscall"

// dieWithParent has the kernel kill the command if the plugin process
// dies first, so a killed plugin leaves no command running.
func dieWithParent(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
