//go:build !linux

package machine

import (
	"io/fs"
)

// Without openat2 every read goes through os.Root.
func openBeneathDir(string) *pathFD { return nil }

func readFileBeneath(*pathFD, string, int, bool, func([]byte)) (bool, error) { return false, nil }

func readDirBeneath(*pathFD, string, string) (bool, []fs.DirEntry, error) { return false, nil, nil }

func statBeneath(*pathFD, string) (bool, fs.FileInfo, error) { return false, nil, nil }

func readLinkBeneath(*pathFD, string) (bool, string, error) { return false, "", nil }

// kernelMounts: no sysfs or procfs to read faster.
type kernelMounts struct{}

func newKernelMounts(*pathFD, *heldDirs) *kernelMounts { return nil }

// heldDirs: no descriptors to keep across detections.
type heldDirs struct{}

func (*heldDirs) rootFor(string, fs.FileInfo) *pathFD { return nil }

func (*kernelMounts) readFile(*pathFD, string, int, bool, func([]byte)) (bool, error) {
	return false, nil
}

func (*kernelMounts) isSysfs(*pathFD) bool          { return false }
func (*kernelMounts) isSysfsAndProcfs(*pathFD) bool { return false }

func (*kernelMounts) stat(*pathFD, string) (bool, fs.FileInfo, error) { return false, nil, nil }

// pathFD is not used where openat2 is unusable.
type pathFD struct{}

func onMemoryFS(*pathFD, string) bool { return false }
