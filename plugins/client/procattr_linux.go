package client

import (
	"os/exec"
	"syscall"
)

// detach puts the plugin in its own process group, so a Ctrl-C at the
// terminal reaches only gpuflow, which then stops plugins in order; and
// has the kernel kill the plugin if gpuflow dies, even by SIGKILL.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
