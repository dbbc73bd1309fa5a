//go:build !linux

package machine

import (
	"io/fs"
	"os"
)

// Without openat2 every read goes through os.Root.
func openBeneathDir(string) *os.File { return nil }

func readFileBeneath(*os.File, string, int, bool, func([]byte)) (bool, error) { return false, nil }

func readDirBeneath(*os.File, string, string) (bool, []fs.DirEntry, error) { return false, nil, nil }

func statBeneath(*os.File, string) (bool, fs.FileInfo, error) { return false, nil, nil }

func readLinkBeneath(*os.File, string) (bool, string, error) { return false, "", nil }

// kernelMounts: no sysfs or procfs to read faster.
type kernelMounts struct{}

func newKernelMounts(*os.File) *kernelMounts { return nil }

func (*kernelMounts) readFile(*os.File, string, int, bool, func([]byte)) (bool, error) {
	return false, nil
}

func (*kernelMounts) isSysfs(*os.File) bool { return false }
