//go:build !(linux && cgo)

package nvml

// Without cgo (or off Linux) there is no dlopen: Open always fails with
// ErrUnavailable and detection asks nvidia-smi.

type cLib struct{ names map[string]string }

func openC(string) (*cLib, error) { return nil, ErrUnavailable }

func (*cLib) init() Return { return ErrorLibraryNotFound }

func (*cLib) readAll() (*Snapshot, error) { return nil, ErrUnavailable }
