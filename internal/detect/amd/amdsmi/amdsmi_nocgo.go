//go:build !(linux && cgo)

package amdsmi

// Without cgo (or off Linux) there is no dlopen: Open always fails with
// ErrUnavailable and detection asks rocm-smi.

type cLib struct{}

func openC(string) (*cLib, error) { return nil, ErrUnavailable }

func (*cLib) libVersion() (Version, Status) { return Version{}, StatusFunctionNotFound }

func (*cLib) init() Status { return StatusFunctionNotFound }

func (*cLib) shutDown() {}

func (*cLib) readAll(Version) (*Snapshot, error) { return nil, ErrUnavailable }
